import { Title } from "@mantine/core";

export default function Policies() {
  return <Title order={2}>Policies</Title>;
}
