import { ChangePasswordForm } from '@/components/auth/change-password.tsx';

export default function AccountPage() {
  return (
    <div>
      <h1>Your account</h1>
      <h2>Password</h2>
      <ChangePasswordForm />
      <p className="muted" style={{ fontSize: 12.5 }}>
        No password yet (you sign in with a link or single sign-on)? An admin can set one:{' '}
        <code>npx toolsmith user password EMAIL</code>.
      </p>
    </div>
  );
}
