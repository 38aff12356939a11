/**
 * Signed-in principals for tests that call the router in-process (createCaller): the users are real rows when a
 * test inserts them (createUser), the principal is what the route's context would resolve for them.
 */
import type { Principal, Role } from '../../contracts/access.ts';

export const principal = (role: Role, userId = `u_test_${role}`): Principal => ({
  userId,
  email: `${role}@test.invalid`,
  role,
  via: 'session',
});
export const TEST_ADMIN = principal('admin');
