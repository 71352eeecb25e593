import { Alert, Button, Center, Divider, Paper, PasswordInput, Stack, Text, Title } from "@mantine/core";
import { useEffect, useState } from "react";
import { useLocation, useNavigate } from "react-router-dom";
import { describeError } from "../api/client";
import { beginOidc, finishOidc, portalConfig, type OidcConfig } from "./oidc";
import { useSession } from "./session";

export function SignIn() {
  const { signIn, signedOutReason } = useSession();
  const navigate = useNavigate();
  const loc = useLocation();
  const returnTo = (loc.state as { from?: string } | null)?.from ?? "/";
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [oidc, setOidc] = useState<OidcConfig | null>(null);
  useEffect(() => {
    portalConfig().then((c) => setOidc(c.oidc));
  }, []);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!token.trim()) return setError("Paste your token: `tessera create token` or your platform team gives you one.");
    setBusy(true);
    setError(null);
    try {
      await signIn(token.trim());
      navigate(returnTo, { replace: true });
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={420} component="main">
        <form onSubmit={submit}>
          <Stack>
            <Title order={2}>Sign in to Tessera</Title>
            {signedOutReason && <Alert color="yellow">{signedOutReason}</Alert>}
            {oidc && (
              <>
                <Button onClick={() => beginOidc(oidc, returnTo).catch((e) => setError(describeError(e)))}>
                  Sign in with {new URL(oidc.issuerUrl).host}
                </Button>
                <Divider label="or with a token" />
              </>
            )}
            <PasswordInput
              label="Token"
              description="Kept in this tab only, until you sign out or close it."
              value={token}
              onChange={(e) => setToken(e.currentTarget.value)}
              autoFocus
              data-testid="token"
            />
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
            <Text size="xs" c="dimmed">
              The portal uses the same API and permissions as the tessera CLI and kubectl.
            </Text>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}

export function OidcCallback() {
  const { signIn } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    (async () => {
      const { oidc } = await portalConfig();
      if (!oidc) throw new Error("this server accepts no OIDC sign-in");
      const { idToken, returnTo } = await finishOidc(oidc);
      await signIn(idToken);
      navigate(returnTo, { replace: true });
    })().catch((e) => setError(describeError(e)));
  }, []); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <Center mih="100vh">
      {error ? <Alert color="red" title="Sign-in failed">{error}</Alert> : <Text>Signing in…</Text>}
    </Center>
  );
}
