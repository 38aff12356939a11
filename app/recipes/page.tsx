import { RecipeList } from '@/components/recipe/RecipeList.tsx';

export default function RecipesPage() {
  return <RecipeList />;
}
