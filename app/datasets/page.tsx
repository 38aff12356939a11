import { CataloguePanel } from '@/components/catalogue/catalogue-panel.tsx';
import { DatasetsView } from '@/components/datasets/datasets-view.tsx';

export default function DatasetsPage() {
  return (
    <div>
      <h1>Datasets</h1>
      <DatasetsView />
      <CataloguePanel kind="datasets" />
    </div>
  );
}
