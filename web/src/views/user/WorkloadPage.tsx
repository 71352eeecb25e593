import { Title } from "@mantine/core";

export default function WorkloadPage() {
  return <Title order={2}>WorkloadPage</Title>;
}
