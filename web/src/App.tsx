import { MantineProvider, Stack, Text, Title } from "@mantine/core";
import { lazy, Suspense, type ReactNode } from "react";
import { BrowserRouter, Navigate, Route, Routes, useLocation } from "react-router-dom";
import { useNamespaces } from "./auth/namespaces";
import { OidcCallback, SignIn } from "./auth/SignIn";
import { SessionProvider, useSession } from "./auth/session";
import { Layout, NamespacePicker } from "./shell/Layout";
import { Loading } from "./ui/common";

// Views load on demand: a data scientist's first page does not wait for the
// admin views' code.
const Launch = lazy(() => import("./views/user/Launch"));
const Workloads = lazy(() => import("./views/user/Workloads"));
const WorkloadPage = lazy(() => import("./views/user/WorkloadPage"));
const Team = lazy(() => import("./views/admin/Team"));
const Approvals = lazy(() => import("./views/admin/Approvals"));
const Fleet = lazy(() => import("./views/admin/Fleet"));
const Queues = lazy(() => import("./views/admin/Queues"));
const Cost = lazy(() => import("./views/admin/Cost"));
const Policies = lazy(() => import("./views/admin/Policies"));
const WhatIf = lazy(() => import("./views/admin/WhatIf"));

function RequireSignIn({ children }: { children: ReactNode }) {
  const { identity } = useSession();
  const loc = useLocation();
  if (!identity) return <Navigate to="/signin" replace state={{ from: loc.pathname + loc.search }} />;
  return <>{children}</>;
}

function Home() {
  const { namespaces, loading } = useNamespaces();
  if (loading) return <Loading what="your namespaces" />;
  if (namespaces.length > 0) return <Navigate to={`/ns/${namespaces[0]}/workloads`} replace />;
  return (
    <Stack maw={520}>
      <Title order={2}>Choose a namespace</Title>
      <Text>
        No namespace is known for you yet. Type your team's namespace above (your platform team can tell you which),
        or ask them to bind your user or group to one.
      </Text>
      <NamespacePicker />
    </Stack>
  );
}

function NotFound() {
  return (
    <Stack>
      <Title order={2}>Nothing here</Title>
      <Text>This address is not a view of the portal. Pick one on the left.</Text>
    </Stack>
  );
}

const page = (el: ReactNode) => <Suspense fallback={<Loading what="the view" />}>{el}</Suspense>;

export function App() {
  return (
    <MantineProvider defaultColorScheme="auto">
      <BrowserRouter basename="/ui">
        <SessionProvider>
          <Routes>
            <Route path="/signin" element={<SignIn />} />
            <Route path="/oidc/callback" element={<OidcCallback />} />
            <Route
              path="/ns/:ns/*"
              element={
                <RequireSignIn>
                  <Layout />
                </RequireSignIn>
              }
            >
              <Route path="launch" element={page(<Launch />)} />
              <Route path="launch/:template" element={page(<Launch />)} />
              <Route path="workloads" element={page(<Workloads />)} />
              <Route path=":kind/:name" element={page(<WorkloadPage />)} />
              <Route path="team" element={page(<Team />)} />
              <Route path="approvals" element={page(<Approvals />)} />
              <Route path="*" element={<NotFound />} />
            </Route>
            <Route
              path="/*"
              element={
                <RequireSignIn>
                  <Layout />
                </RequireSignIn>
              }
            >
              <Route index element={<Home />} />
              <Route path="admin/fleet" element={page(<Fleet />)} />
              <Route path="admin/queues" element={page(<Queues />)} />
              <Route path="admin/cost" element={page(<Cost />)} />
              <Route path="admin/policies" element={page(<Policies />)} />
              <Route path="admin/whatif" element={page(<WhatIf />)} />
              <Route path="*" element={<NotFound />} />
            </Route>
          </Routes>
        </SessionProvider>
      </BrowserRouter>
    </MantineProvider>
  );
}
