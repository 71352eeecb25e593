import { describe, expect, it } from "vitest";
import { headline, reviewPath, type Forecast } from "./EstimatedStart";

const base: Forecast = { wouldAdmit: false, reason: "InsufficientCapacity", message: "", gpus: "4", costPerHour: "10" };

describe("headline", () => {
  it("names the flavor when it would run now", () => {
    expect(headline({ ...base, wouldAdmit: true, reason: "Admitted", flavors: ["h100-ondemand"] })).toBe(
      "would run now on h100-ondemand",
    );
  });
  it("gives the position and today's start time when it waits", () => {
    const now = new Date(2026, 11, 3, 9, 0);
    const start = new Date(2026, 11, 3, 14, 20);
    const text = headline({ ...base, queuePosition: 3, estimatedStart: start.toISOString() }, now);
    expect(text.startsWith("waits: position 3, estimated start ")).toBe(true);
    expect(text).toContain(start.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }));
  });
  it("says an approval comes first", () => {
    expect(headline({ ...base, reason: "WaitingForApproval", wouldAdmit: false })).toBe("needs an approval first");
  });
  it("asks in the object's namespace", () => {
    expect(reviewPath("team nlp")).toBe("/apis/tessera.dev/v1/namespaces/team%20nlp/schedulingreviews");
  });
});
