import { DiagnosticsReport } from '@/components/system/diagnostics-report.tsx';
import { RunDiagnosticsButton } from '@/components/runs/run-diagnostics-button.tsx';
import { RunsTable } from '@/components/runs/runs-table.tsx';
import { WorkerRestarts } from '@/components/system/worker-restarts.tsx';
import { AuditPanel, TokensPanel, UsersPanel } from '@/components/system/admin-panels.tsx';

export default function SystemPage() {
  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>System</h1>
        <RunDiagnosticsButton />
      </div>
      <DiagnosticsReport />
      <h2>Worker</h2>
      <WorkerRestarts />
      <h2>Diagnostics history</h2>
      <RunsTable kind="diagnostics" />
      <h2>Users</h2>
      <UsersPanel />
      <h2>API tokens</h2>
      <TokensPanel />
      <h2>Audit log</h2>
      <AuditPanel />
    </div>
  );
}
