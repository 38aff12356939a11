import { CataloguePanel } from '@/components/catalogue/catalogue-panel.tsx';
import { ModelsView } from '@/components/models/models-view.tsx';

export default function ModelsPage() {
  return (
    <div>
      <h1>Models</h1>
      <ModelsView />
      <CataloguePanel kind="models" />
    </div>
  );
}
