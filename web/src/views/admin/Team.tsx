import { Title } from "@mantine/core";

export default function Team() {
  return <Title order={2}>Team</Title>;
}
