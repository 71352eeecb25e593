import {
  Alert,
  Button,
  Card,
  Code,
  Group,
  NumberInput,
  ScrollArea,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
} from "@mantine/core";
import { useEffect, useMemo, useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import YAML from "yaml";
import type { KubeObject } from "../../api/client";
import { useSnapshot } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useSession } from "../../auth/session";
import { ErrorNote, Loading } from "../../ui/common";
import { CostPerHour } from "./cost";
import { EstimatedStart } from "./EstimatedStart";
import { splitWords, submitObject, useDebounced } from "./submit";
import { fieldErrors } from "./workload";

interface Param {
  name: string;
  path: string;
  type?: "string" | "quantity" | "integer" | "boolean" | "command";
  description?: string;
  default?: unknown;
  required?: boolean;
  enum?: string[];
  minimum?: number;
  maximum?: number;
}

// Errors keyed by form field: a parameter's name, "name", or "" for the rest.
type Errors = Record<string, string>;

function errorsFor(e: unknown, params: Param[]): Errors {
  const out: Errors = {};
  for (const { field, message } of fieldErrors(e)) {
    const p = field.startsWith("parameters.")
      ? field.slice("parameters.".length)
      : field === "metadata.name"
        ? "name"
        : params.find((q) => q.path.replace(/\\/g, "") === field.replace(/\\/g, ""))?.name ?? "";
    out[p] = out[p] ? `${out[p]}; ${message}` : p ? message : field ? `${field}: ${message}` : message;
  }
  return out;
}

// Submit with the dry run, the preview's cost and estimated start before it.
function SubmitBar({ ns, object, onError, disabled }: { ns: string; object: KubeObject | null; onError: (e: unknown) => void; disabled?: boolean }) {
  const { client } = useSession();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  return (
    <Stack gap="xs">
      <CostPerHour namespace={ns} object={object} />
      <EstimatedStart namespace={ns} object={object} />
      <Group>
        <Button
          disabled={!object || disabled}
          loading={busy}
          onClick={async () => {
            if (!object) return;
            setBusy(true);
            try {
              navigate(await submitObject(client, ns, object));
            } catch (e) {
              onError(e);
            } finally {
              setBusy(false);
            }
          }}
        >
          Submit
        </Button>
      </Group>
    </Stack>
  );
}

function Preview({ object }: { object: KubeObject | null }) {
  return (
    <Card withBorder p="sm">
      <Text fw={600} size="sm" mb={4}>
        Preview of what will be created
      </Text>
      <ScrollArea h={420} type="auto">
        <Code block data-testid="preview" aria-label="Preview of the object">
          {object ? YAML.stringify(object) : "Fill in the form to see the object."}
        </Code>
      </ScrollArea>
    </Card>
  );
}

function ParamInput({ p, value, error, onChange }: { p: Param; value: unknown; error?: string; onChange: (v: unknown) => void }) {
  const label = p.name;
  const common = { label, description: p.description, error, withAsterisk: p.required };
  if (p.type === "boolean")
    return <Switch label={label} description={p.description} error={error} checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
  if (p.enum?.length)
    return <Select {...common} data={p.enum} value={value === undefined ? null : String(value)} onChange={(v) => onChange(v ?? undefined)} clearable={!p.required} />;
  if (p.type === "integer")
    return (
      <NumberInput
        {...common}
        allowDecimal={false}
        min={p.minimum}
        max={p.maximum}
        value={value === undefined || value === "" ? "" : Number(value)}
        onChange={(v) => onChange(v === "" ? undefined : v)}
        placeholder={p.default !== undefined ? String(p.default) : undefined}
      />
    );
  return (
    <TextInput
      {...common}
      value={value === undefined ? "" : Array.isArray(value) ? value.join(" ") : String(value)}
      placeholder={p.default !== undefined ? String(Array.isArray(p.default) ? p.default.join(" ") : p.default) : p.type === "command" ? "python3 train.py" : undefined}
      onChange={(e) => onChange(e.currentTarget.value)}
    />
  );
}

function TemplateForm({ ns, tmpl }: { ns: string; tmpl: KubeObject }) {
  const { client } = useSession();
  const params: Param[] = useMemo(() => tmpl.spec?.parameters ?? [], [tmpl]);
  const [name, setName] = useState("");
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(params.filter((p) => p.default !== undefined).map((p) => [p.name, p.default])),
  );
  const [errors, setErrors] = useState<Errors>({});
  const [object, setObject] = useState<KubeObject | null>(null);
  const input = useDebounced({ name, values }, 300);
  useEffect(() => {
    let live = true;
    const parameters: Record<string, unknown> = {};
    for (const p of params) {
      const v = input.values[p.name];
      if (v === undefined || v === "") continue;
      parameters[p.name] = p.type === "command" && typeof v === "string" ? splitWords(v) : v;
    }
    client
      .post<KubeObject>(`/apis/tessera.dev/v1/templates/${encodeURIComponent(tmpl.metadata.name)}/render`, {
        apiVersion: "tessera.dev/v1",
        kind: "TemplateRender",
        spec: { name: input.name || "unnamed", namespace: ns, parameters },
      })
      .then((r) => {
        if (!live) return;
        setObject(r.status?.object ?? null);
        setErrors(input.name ? {} : { name: "name it: lower case letters, digits and dashes" });
      })
      .catch((e) => {
        if (!live) return;
        setObject(null);
        setErrors(errorsFor(e, params));
      });
    return () => {
      live = false;
    };
  }, [client, ns, tmpl, params, input]);
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      <Stack gap="sm" component="form" aria-label={`Launch ${tmpl.metadata.name}`} onSubmit={(e) => e.preventDefault()}>
        <Title order={3}>{tmpl.spec?.displayName ?? tmpl.metadata.name}</Title>
        <Text size="sm" c="dimmed">
          {tmpl.spec?.description}
        </Text>
        <TextInput label="Name" withAsterisk value={name} error={name ? errors.name : undefined} onChange={(e) => setName(e.currentTarget.value.trim())} />
        {params.map((p) => (
          <ParamInput key={p.name} p={p} value={values[p.name]} error={errors[p.name]} onChange={(v) => setValues((s) => ({ ...s, [p.name]: v }))} />
        ))}
        {errors[""] && (
          <Alert color="red" role="alert" title="The server refuses this">
            {errors[""]}
          </Alert>
        )}
        <SubmitBar ns={ns} object={name && !Object.keys(errors).length ? object : null} onError={(e) => setErrors(errorsFor(e, params))} />
      </Stack>
      <Preview object={object} />
    </SimpleGrid>
  );
}

function Catalogue({ ns, templates, current }: { ns: string; templates: KubeObject[]; current?: string }) {
  return (
    <SimpleGrid cols={{ base: 2, md: 4 }} role="list" aria-label="Templates">
      {templates.map((t) => (
        <Card
          key={t.metadata.name}
          withBorder
          role="listitem"
          component={Link}
          to={`/ns/${ns}/launch/${t.metadata.name}`}
          aria-current={current === t.metadata.name ? "true" : undefined}
          style={current === t.metadata.name ? { outline: "2px solid var(--mantine-color-blue-filled)" } : undefined}
        >
          <Text fw={600}>{t.spec?.displayName ?? t.metadata.name}</Text>
          <Text size="xs" c="dimmed">
            {t.spec?.category} · {t.metadata.name}
          </Text>
          <Text size="sm" mt={4} lineClamp={3}>
            {t.spec?.description}
          </Text>
        </Card>
      ))}
    </SimpleGrid>
  );
}

// A batch Job from a form: the Job a Kueue user would write (docs/workloads.md "The quick form").
function JobForm({ ns }: { ns: string }) {
  const [f, setF] = useState({ name: "", image: "", command: "", gpu: "1", cpu: "1", memory: "4Gi", maxRun: "" as number | "", queue: "default" });
  const [errors, setErrors] = useState<Errors>({});
  const set = (k: keyof typeof f) => (v: string | number) => {
    setF((s) => ({ ...s, [k]: v }));
    setErrors({});
  };
  const object: KubeObject | null = useMemo(() => {
    if (!f.name || !f.command) return null;
    const limits: Record<string, string> = { cpu: f.cpu, memory: f.memory };
    if (f.gpu && f.gpu !== "0") limits["nvidia.com/gpu"] = f.gpu;
    return {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: f.name, labels: { "kueue.x-k8s.io/queue-name": f.queue } },
      spec: {
        backoffLimit: 3,
        ...(f.maxRun ? { activeDeadlineSeconds: Number(f.maxRun) } : {}),
        template: {
          spec: {
            restartPolicy: "Never",
            containers: [{ name: "main", ...(f.image ? { image: f.image } : {}), command: splitWords(f.command), resources: { requests: limits, limits: { ...limits } } }],
          },
        },
      },
    };
  }, [f]);
  const at = (field: string) => errors[field];
  const onError = (e: unknown) => {
    const out: Errors = {};
    const map: [RegExp, string][] = [
      [/^metadata\.name/, "name"],
      [/\.image$/, "image"],
      [/\.command/, "command"],
      [/nvidia\.com\/gpu/, "gpu"],
      [/\.cpu$/, "cpu"],
      [/\.memory$/, "memory"],
      [/activeDeadlineSeconds/, "maxRun"],
      [/queue/, "queue"],
    ];
    for (const { field, message } of fieldErrors(e)) {
      const k = map.find(([re]) => re.test(field) || (field === "" && re.test(message)))?.[1] ?? "";
      out[k] = out[k] ? `${out[k]}; ${message}` : k ? message : field ? `${field}: ${message}` : message;
    }
    setErrors(out);
  };
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      <Stack gap="sm" component="form" aria-label="Batch job" onSubmit={(e) => e.preventDefault()}>
        <TextInput label="Name" withAsterisk value={f.name} error={at("name")} onChange={(e) => set("name")(e.currentTarget.value.trim())} />
        <TextInput label="Command" withAsterisk description="the program and its arguments" placeholder="python3 prep.py" value={f.command} error={at("command")} onChange={(e) => set("command")(e.currentTarget.value)} />
        <TextInput label="Image" description="an OCI image (else a process on the node)" value={f.image} error={at("image")} onChange={(e) => set("image")(e.currentTarget.value.trim())} />
        <Group grow>
          <TextInput label="GPUs" description="0.25, 0.5 or whole GPUs" value={f.gpu} error={at("gpu")} onChange={(e) => set("gpu")(e.currentTarget.value.trim())} />
          <TextInput label="CPU" description="cores (500m, 4)" value={f.cpu} error={at("cpu")} onChange={(e) => set("cpu")(e.currentTarget.value.trim())} />
          <TextInput label="Memory" description="4Gi, 512Mi" value={f.memory} error={at("memory")} onChange={(e) => set("memory")(e.currentTarget.value.trim())} />
        </Group>
        <Group grow>
          <NumberInput label="Max run time (seconds)" description="then it fails (DeadlineExceeded)" min={1} allowDecimal={false} value={f.maxRun} error={at("maxRun")} onChange={(v) => set("maxRun")(v === "" ? "" : Number(v))} />
          <TextInput label="Queue" description="the LocalQueue" value={f.queue} error={at("queue")} onChange={(e) => set("queue")(e.currentTarget.value.trim())} />
        </Group>
        {errors[""] && (
          <Alert color="red" role="alert" title="The server refuses this">
            {errors[""]}
          </Alert>
        )}
        <SubmitBar ns={ns} object={object} onError={onError} />
      </Stack>
      <Preview object={object} />
    </SimpleGrid>
  );
}

// Paste YAML: parse errors with their line, the server's with their field path.
function YamlForm({ ns }: { ns: string }) {
  const [text, setText] = useState("");
  const [serverError, setServerError] = useState<string | null>(null);
  const parsed = useMemo((): { object: KubeObject | null; error: string | null } => {
    if (!text.trim()) return { object: null, error: null };
    const doc = YAML.parseDocument(text, { prettyErrors: true });
    if (doc.errors.length) {
      const e = doc.errors[0];
      return { object: null, error: `line ${e.linePos?.[0].line ?? "?"}, column ${e.linePos?.[0].col ?? "?"}: ${e.message.split("\n")[0]}` };
    }
    const o = doc.toJS() as KubeObject;
    if (!o || typeof o !== "object" || !o.kind || !o.apiVersion) return { object: null, error: "an object needs apiVersion and kind" };
    if (!o.metadata?.name) return { object: null, error: "metadata.name: required" };
    return { object: o, error: null };
  }, [text]);
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      <Stack gap="sm">
        <Textarea
          label="YAML"
          description={`One object; created in ${ns}`}
          autosize
          minRows={16}
          maxRows={30}
          styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
          value={text}
          onChange={(e) => {
            setText(e.currentTarget.value);
            setServerError(null);
          }}
          error={parsed.error ?? serverError}
        />
        <SubmitBar ns={ns} object={parsed.object} onError={(e) => setServerError(fieldErrors(e).map((f) => (f.field ? `${f.field}: ${f.message}` : f.message)).join("; "))} />
      </Stack>
      <Preview object={parsed.object} />
    </SimpleGrid>
  );
}

export default function Launch() {
  const { ns = "", template } = useParams();
  const { client } = useSession();
  const navigate = useNavigate();
  const templates = useSnapshot((s) => client.list(K.templates, undefined, undefined, s), [client], 0);
  const [tab, setTab] = useState<string | null>("template");
  const items = templates.data?.items ?? [];
  const current = items.find((t) => t.metadata.name === template);
  return (
    <Stack>
      <Title order={2}>Launch in {ns}</Title>
      <Tabs value={tab} onChange={setTab} keepMounted={false}>
        <Tabs.List aria-label="How to launch">
          <Tabs.Tab value="template">From a template</Tabs.Tab>
          <Tabs.Tab value="job">Batch job</Tabs.Tab>
          <Tabs.Tab value="yaml">Paste YAML</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="template" pt="md">
          {templates.loading ? (
            <Loading what="templates" />
          ) : templates.error ? (
            <ErrorNote error={templates.error} title="Cannot read the templates" />
          ) : (
            <Stack>
              <Catalogue ns={ns} templates={items} current={template} />
              {template && !current && <Alert color="yellow">No template named {template}.</Alert>}
              {current && <TemplateForm key={current.metadata.name} ns={ns} tmpl={current} />}
              {!template && items.length > 0 && (
                <Text c="dimmed" size="sm">
                  Pick a template. <Button variant="subtle" size="compact-sm" onClick={() => navigate(`/ns/${ns}/launch/${items[0].metadata.name}`)}>Start with {items[0].metadata.name}</Button>
                </Text>
              )}
            </Stack>
          )}
        </Tabs.Panel>
        <Tabs.Panel value="job" pt="md">
          <JobForm ns={ns} />
        </Tabs.Panel>
        <Tabs.Panel value="yaml" pt="md">
          <YamlForm ns={ns} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

