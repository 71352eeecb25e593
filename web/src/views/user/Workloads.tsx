import { Title } from "@mantine/core";

export default function Workloads() {
  return <Title order={2}>Workloads</Title>;
}
