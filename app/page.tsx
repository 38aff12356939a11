import { RunsTable } from '@/components/RunsTable.tsx';
import { RunDiagnosticsButton } from '@/components/RunDiagnosticsButton.tsx';

export default function Dashboard() {
  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Runs</h1>
        <RunDiagnosticsButton />
      </div>
      <RunsTable />
    </div>
  );
}
