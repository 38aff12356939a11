import { RunsTable } from '@/components/runs/runs-table.tsx';
import { RunDiagnosticsButton } from '@/components/runs/run-diagnostics-button.tsx';
import { ImportRunDialog } from '@/components/runs/import-run-dialog.tsx';

export default function Dashboard() {
  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Runs</h1>
        <div className="row">
          <ImportRunDialog />
          <RunDiagnosticsButton />
        </div>
      </div>
      <RunsTable />
    </div>
  );
}
