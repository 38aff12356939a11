import { RunsTable } from '@/components/runs/runs-table.tsx';
import { RunDiagnosticsButton } from '@/components/runs/run-diagnostics-button.tsx';

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
