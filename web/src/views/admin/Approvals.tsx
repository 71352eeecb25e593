import { Title } from "@mantine/core";

export default function Approvals() {
  return <Title order={2}>Approvals</Title>;
}
