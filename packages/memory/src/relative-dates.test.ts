import assert from "node:assert/strict";
import { test } from "node:test";
import { Memory } from "./memory.js";
import { parseDay, resolveRelativeDates } from "./relative-dates.js";

test("session dates in the forms sources write them", () => {
  assert.equal(parseDay("1:56 pm on 8 May, 2023"), Date.UTC(2023, 4, 8));
  assert.equal(parseDay("May 8th, 2023"), Date.UTC(2023, 4, 8));
  assert.equal(parseDay("2023-05-08"), Date.UTC(2023, 4, 8));
  assert.equal(parseDay("sometime in spring"), undefined);
  assert.equal(parseDay(""), undefined);
});

test("relative dates resolved against the session's day", () => {
  const on = "1:56 pm on 8 May, 2023"; // a Monday
  assert.equal(resolveRelativeDates("I went to a support group yesterday.", on), "yesterday = 7 May 2023");
  assert.equal(resolveRelativeDates("We met two days ago", on), "two days ago = 6 May 2023");
  assert.equal(resolveRelativeDates("a couple of days ago", on), "a couple of days ago = 6 May 2023");
  assert.equal(
    resolveRelativeDates("I ran a race last Saturday", on),
    "last saturday = Saturday, 6 May 2023",
  );
  // "last Monday" said on a Monday is a week back, not today.
  assert.equal(resolveRelativeDates("since last Mon.", on), "last mon. = Monday, 1 May 2023");
  assert.equal(resolveRelativeDates("See you next Friday", on), "next friday = Friday, 12 May 2023");
  assert.equal(resolveRelativeDates("Last month was busy", on), "last month = April 2023");
  assert.equal(resolveRelativeDates("a book I read last year", on), "last year = 2022");
  assert.equal(
    resolveRelativeDates("Seven years now, and still painting", on),
    "seven years now = since 2016",
  );
  assert.equal(resolveRelativeDates("I've known them for 4 years", on), "for 4 years = since 2019");
  assert.equal(resolveRelativeDates("started about a year ago", on), "a year ago = May 2022");
  // Month arithmetic crosses the year.
  assert.equal(resolveRelativeDates("last month", "3 January, 2024"), "last month = December 2023");
  assert.equal(resolveRelativeDates("the day before yesterday", on), "the day before yesterday = 6 May 2023");
  // Several, in order, each once.
  assert.equal(
    resolveRelativeDates("Yesterday I baked; tomorrow I rest. Yesterday was long.", on),
    "yesterday = 7 May 2023; tomorrow = 9 May 2023",
  );
});

test("nothing is made up: no session day, or no relative date", () => {
  assert.equal(resolveRelativeDates("yesterday", "sometime"), "");
  assert.equal(resolveRelativeDates("I like Saturdays and a while ago is vague", "8 May, 2023"), "");
  assert.equal(resolveRelativeDates("", "8 May, 2023"), "");
});

test("a turn keeps its words; the context shows the resolved date beside them", async () => {
  const memory = new Memory();
  const c = await memory.add({
    type: "user_input",
    content: "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    meta: { speaker: "Caroline", date: "1:56 pm on 8 May, 2023" },
  });
  assert.equal(c.content, "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.");
  assert.equal(c.meta.when, "yesterday = 7 May 2023");
  const ctx = await memory.context("When did Caroline go to the LGBTQ support group?", {
    budget: 200,
    touch: false,
  });
  assert.match(
    ctx.text,
    /\[1:56 pm on 8 May, 2023\]\nCaroline: I went .* powerful\. \[yesterday = 7 May 2023\]/,
  );
  assert.ok(ctx.tokens <= 200);
  memory.close();
});
