import { DatasetsView } from '@/components/DatasetsView.tsx';

export default function DatasetsPage() {
  return (
    <div>
      <h1>Datasets</h1>
      <DatasetsView />
    </div>
  );
}
