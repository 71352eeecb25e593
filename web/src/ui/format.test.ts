import { describe, expect, it } from "vitest";
import { age, gpus, milliGpu } from "./format";

describe("format", () => {
  it("reads GPU quantities as integers", () => {
    expect(milliGpu("0.25")).toBe(250);
    expect(milliGpu("250m")).toBe(250);
    expect(milliGpu("8")).toBe(8000);
    expect(milliGpu("1.5")).toBe(1500);
    expect(milliGpu(undefined)).toBe(0);
    expect(gpus(250)).toBe("0.25");
    expect(gpus(8000)).toBe("8");
  });
  it("writes ages as kubectl does", () => {
    const now = Date.parse("2026-12-03T10:00:00Z");
    expect(age("2026-12-03T09:59:30Z", now)).toBe("30s");
    expect(age("2026-12-03T09:00:00Z", now)).toBe("60m");
    expect(age("2026-12-02T10:00:00Z", now)).toBe("24h");
    expect(age("2026-11-20T10:00:00Z", now)).toBe("13d");
  });
});
