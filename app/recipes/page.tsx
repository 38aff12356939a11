import { RecipeList } from '@/components/recipes/recipe-list.tsx';

export default function RecipesPage() {
  return <RecipeList />;
}
