// What the panels share: a titled section, a row of facts, a copyable value,
// and lists read by polling (the page already holds the view's live watches).
import { ActionIcon, Card, Code, CopyButton, Group, SimpleGrid, Stack, Text, Title, Tooltip } from "@mantine/core";
import { useEffect, useId, useState, type ReactNode } from "react";
import type { KubeObject, Resource } from "../../../api/client";
import { useSnapshot } from "../../../api/hooks";
import { useSession } from "../../../auth/session";

export function Section({ title, children, testId }: { title: string; children: ReactNode; testId?: string }) {
  const id = useId();
  return (
    <Card withBorder component="section" aria-labelledby={id} data-testid={testId} padding="md">
      <Stack gap="sm">
        <Title order={3} size="h4" id={id}>
          {title}
        </Title>
        {children}
      </Stack>
    </Card>
  );
}

export interface Fact {
  label: string;
  value: ReactNode;
  hint?: string;
}

// Labelled values in a grid; each is a term and its description for screen readers.
export function Facts({ facts, cols = 4 }: { facts: Fact[]; cols?: number }) {
  return (
    <SimpleGrid cols={{ base: 2, sm: cols }} spacing="sm" component="dl" m={0}>
      {facts.map((f) => (
        <div key={f.label}>
          <Text component="dt" size="xs" c="dimmed" tt="uppercase" fw={600}>
            {f.label}
          </Text>
          <Text component="dd" m={0} size="sm" data-fact={f.label} title={f.hint}>
            {f.value === undefined || f.value === null || f.value === "" ? "—" : f.value}
          </Text>
        </div>
      ))}
    </SimpleGrid>
  );
}

// A value to copy (a URL, a command), with a labelled copy button.
export function CopyLine({ value, label }: { value: string; label: string }) {
  return (
    <Group gap="xs" wrap="nowrap" align="center">
      <Code style={{ flex: 1, overflowX: "auto", whiteSpace: "nowrap" }} aria-label={label}>
        {value}
      </Code>
      <CopyButton value={value} timeout={1500}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? "Copied" : `Copy the ${label}`} withArrow>
            <ActionIcon variant="subtle" color={copied ? "teal" : "gray"} onClick={copy} aria-label={`Copy the ${label}`}>
              <CopyIcon copied={copied} />
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}

function CopyIcon({ copied }: { copied: boolean }) {
  return (
    <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
      {copied ? (
        <path d="M5 12l5 5L20 7" />
      ) : (
        <>
          <rect x="9" y="9" width="11" height="11" rx="2" />
          <path d="M5 15V5a2 2 0 0 1 2-2h10" />
        </>
      )}
    </svg>
  );
}

// The portal's address of a proxy path (what a browser or curl reaches).
export function absolute(path: string): string {
  return `${window.location.origin}${path}`;
}

// Objects of a kind by label, read every few seconds.
export function useListed(r: Resource, namespace: string, labelSelector: string, everyMs = 3000) {
  const { client } = useSession();
  return useSnapshot<KubeObject[]>(
    async (signal) => (await client.list(r, namespace, { labelSelector }, signal)).items,
    [client, r, namespace, labelSelector],
    everyMs,
  );
}

// The time now, again every `everyMs`: for durations of what still runs.
export function useNow(everyMs = 5000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
