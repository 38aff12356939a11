import { DiagnosticsReport } from '@/components/DiagnosticsReport.tsx';
import { RunDiagnosticsButton } from '@/components/RunDiagnosticsButton.tsx';
import { RunsTable } from '@/components/RunsTable.tsx';

export default function SystemPage() {
  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>System</h1>
        <RunDiagnosticsButton />
      </div>
      <DiagnosticsReport />
      <h2>Diagnostics history</h2>
      <RunsTable kind="diagnostics" />
    </div>
  );
}
