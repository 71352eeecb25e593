import { Title } from "@mantine/core";

export default function Queues() {
  return <Title order={2}>Queues</Title>;
}
