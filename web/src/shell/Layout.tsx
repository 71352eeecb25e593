import {
  ActionIcon,
  AppShell,
  Autocomplete,
  Burger,
  Group,
  NavLink,
  Stack,
  Text,
  Title,
  Tooltip,
  useMantineColorScheme,
} from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useEffect, useState, type ReactNode } from "react";
import { Link, Outlet, useLocation, useNavigate, useParams } from "react-router-dom";
import { K } from "../api/kinds";
import { remember, useNamespaces } from "../auth/namespaces";
import { useCan } from "../auth/rbac";
import { useSession } from "../auth/session";

// `show` false hides it: a permission still being asked is a no until the server says yes.
function Nav({ to, label, show = true }: { to: string; label: string; show?: boolean }) {
  const loc = useLocation();
  if (!show) return null;
  const active = loc.pathname === to || loc.pathname.startsWith(to + "/");
  return <NavLink component={Link} to={to} label={label} active={active} aria-current={active ? "page" : undefined} />;
}

export function NamespacePicker() {
  const { ns } = useParams();
  const navigate = useNavigate();
  const loc = useLocation();
  const { namespaces } = useNamespaces();
  const [value, setValue] = useState(ns ?? "");
  useEffect(() => setValue(ns ?? ""), [ns]);
  const go = (next: string) => {
    next = next.trim();
    if (!next || next === ns) return;
    remember(next);
    const rest = ns ? loc.pathname.replace(`/ns/${ns}/`, "").split("/")[0] : "workloads";
    navigate(`/ns/${next}/${rest || "workloads"}`);
  };
  return (
    <Autocomplete
      aria-label="Namespace"
      placeholder="namespace"
      data={namespaces}
      value={value}
      onChange={setValue}
      onOptionSubmit={go}
      onKeyDown={(e) => e.key === "Enter" && go(value)}
      w={200}
      size="xs"
    />
  );
}

export function Layout({ children }: { children?: ReactNode }) {
  const [opened, { toggle }] = useDisclosure();
  const { identity, signOut } = useSession();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  const { ns } = useParams();
  const canListNodes = useCan({ verb: "list", resource: K.nodes });
  const canListCQ = useCan({ verb: "list", resource: K.clusterQueues });
  const canUsage = useCan({ verb: "list", resource: K.usageRecords });
  const canPolicies = useCan({ verb: "create", resource: K.approvalPolicies });
  const canWhatIf = useCan({ verb: "create", resource: K.simulationReviews });
  const canApprove = useCan(ns ? { verb: "update", resource: K.approvalRequests, subresource: "approval", namespace: ns } : null);
  return (
    <AppShell header={{ height: 52 }} navbar={{ width: 220, breakpoint: "sm", collapsed: { mobile: !opened } }} padding="md">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
            <Link to="/" style={{ textDecoration: "none", color: "inherit" }}>
              <Title order={3}>Tessera</Title>
            </Link>
            <NamespacePicker />
          </Group>
          <Group gap="sm" wrap="nowrap">
            <Tooltip label={colorScheme === "dark" ? "Light theme" : "Dark theme"}>
              <ActionIcon
                variant="default"
                aria-label={colorScheme === "dark" ? "Switch to the light theme" : "Switch to the dark theme"}
                onClick={() => setColorScheme(colorScheme === "dark" ? "light" : "dark")}
              >
                {colorScheme === "dark" ? "☀" : "☾"}
              </ActionIcon>
            </Tooltip>
            <Text size="sm" data-testid="whoami" visibleFrom="xs">
              {identity?.username}
            </Text>
            <Text component="button" size="sm" c="blue" style={{ background: "none", border: 0, cursor: "pointer" }} onClick={() => signOut()}>
              Sign out
            </Text>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Views">
        <Stack gap={2}>
          {ns && (
            <>
              <Text size="xs" c="dimmed" px="sm" pt="xs">
                {ns}
              </Text>
              <Nav to={`/ns/${ns}/launch`} label="Launch" />
              <Nav to={`/ns/${ns}/workloads`} label="Workloads" />
              <Nav to={`/ns/${ns}/team`} label="Team" />
              <Nav to={`/ns/${ns}/approvals`} label="Approvals" show={canApprove === true} />
            </>
          )}
          {(canListNodes || canListCQ || canUsage || canPolicies || canWhatIf) && (
            <Text size="xs" c="dimmed" px="sm" pt="md">
              Platform
            </Text>
          )}
          <Nav to="/admin/fleet" label="Fleet" show={canListNodes === true} />
          <Nav to="/admin/queues" label="Queues and cohorts" show={canListCQ === true} />
          <Nav to="/admin/cost" label="Usage and cost" show={canUsage === true} />
          <Nav to="/admin/policies" label="Policies" show={canPolicies === true} />
          <Nav to="/admin/whatif" label="What if" show={canWhatIf === true} />
        </Stack>
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1}>
        {children ?? <Outlet />}
      </AppShell.Main>
    </AppShell>
  );
}
