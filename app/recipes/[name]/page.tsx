import { RecipeDesigner } from '@/components/recipes/recipe-designer.tsx';
import { safeDecode } from '@/lib/safe-decode.ts';

type Search = { v?: string | string[]; template?: string | string[] };

const one = (x: string | string[] | undefined) => (Array.isArray(x) ? x[0] : x);

/** The recipe designer: `/recipes/<name>?v=N` (a stored version; latest without v) or `/recipes/new?template=embedded|micro`. */
export default async function RecipePage({
  params,
  searchParams,
}: {
  params: Promise<{ name: string }>;
  searchParams: Promise<Search>;
}) {
  const { name } = await params;
  const search = await searchParams;
  const v = Number(one(search.v));
  return (
    <RecipeDesigner
      name={safeDecode(name)}
      version={Number.isInteger(v) && v >= 1 ? v : undefined}
      template={one(search.template)}
    />
  );
}
