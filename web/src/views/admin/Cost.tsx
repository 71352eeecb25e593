import { Title } from "@mantine/core";

export default function Cost() {
  return <Title order={2}>Cost</Title>;
}
