import { Alert, Badge, Center, Loader, Stack, Text } from "@mantine/core";
import type { ReactNode } from "react";
import { ApiError, describeError } from "../api/client";

// Loading, empty and error states, the same in every view.

export function Loading({ what }: { what: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Stack align="center" gap="xs">
        <Loader size="sm" />
        <Text size="sm" c="dimmed">
          Loading {what}…
        </Text>
      </Stack>
    </Center>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <Center py="xl">
      <Text c="dimmed" data-testid="empty">
        {children}
      </Text>
    </Center>
  );
}

export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  const forbidden = error instanceof ApiError && error.forbidden;
  return (
    <Alert color={forbidden ? "yellow" : "red"} title={title ?? (forbidden ? "Not allowed" : "Something went wrong")} role="alert">
      {describeError(error)}
    </Alert>
  );
}

const PHASE_COLORS: Record<string, string> = {
  Running: "green",
  Ready: "green",
  Admitted: "green",
  Succeeded: "teal",
  Complete: "teal",
  Completed: "teal",
  Finished: "teal",
  Pending: "yellow",
  Waiting: "yellow",
  Queued: "yellow",
  Resuming: "blue",
  Suspended: "gray",
  Failed: "red",
  Error: "red",
  NotReady: "red",
  Evicted: "orange",
  Preempted: "orange",
};

export function StateBadge({ state }: { state: string | undefined }) {
  const s = state ?? "Unknown";
  return (
    <Badge color={PHASE_COLORS[s] ?? "gray"} variant="light" data-state={s}>
      {s}
    </Badge>
  );
}
