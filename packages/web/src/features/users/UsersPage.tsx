import { PlaceholderPage } from '../../components/PlaceholderPage';

export function UsersPage() {
  return (
    <PlaceholderPage
      title="Users"
      icon="people"
      description="All users, filtered by role, name and registration, sorted by username."
    />
  );
}
