import { Title } from "@mantine/core";

export default function Launch() {
  return <Title order={2}>Launch</Title>;
}
