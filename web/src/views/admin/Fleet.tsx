import { Title } from "@mantine/core";

export default function Fleet() {
  return <Title order={2}>Fleet</Title>;
}
