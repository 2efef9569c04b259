/** Choosing the server's code action behind a palette command. */

import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import { actionsRunning, ActionLike, commandOf, SERVER_COMMANDS } from "../code-actions";

const uri = "file:///work/project/src/test/java/OrderServiceTest.java";

const offered: ActionLike[] = [
    { title: "Organize imports", command: { title: "Organize imports", command: "java.organizeImports" } },
    {
        title: "flakesense: mark as flaky (async wait)",
        command: { title: "mark", command: SERVER_COMMANDS.markFlaky, arguments: [uri, "OrderServiceTest#waits", "async-wait"] },
    },
    {
        title: "flakesense: mark as flaky (async wait)",
        command: { title: "mark", command: SERVER_COMMANDS.markFlaky, arguments: [uri, "OrderServiceTest#waits", "async-wait"] },
    },
    { title: "flakesense: mark as not flaky", command: SERVER_COMMANDS.markNotFlaky, arguments: [uri, "OrderServiceTest#waits"] },
    {
        title: "flakesense: mark as flaky (time)",
        command: { title: "mark", command: SERVER_COMMANDS.markFlaky, arguments: [uri, "OrderServiceTest#waits", "time"] },
        disabled: { reason: "already marked" },
    },
];

describe("actionsRunning", () => {
    test("keeps the actions that run the command, once each, without disabled ones", () => {
        const picked = actionsRunning(offered, SERVER_COMMANDS.markFlaky);
        assert.deepEqual(
            picked.map((action) => action.title),
            ["flakesense: mark as flaky (async wait)"],
        );
        assert.deepEqual(commandOf(picked[0])?.arguments, [uri, "OrderServiceTest#waits", "async-wait"]);
    });

    test("accepts plain commands as well as code actions", () => {
        const picked = actionsRunning(offered, SERVER_COMMANDS.markNotFlaky);
        assert.equal(picked.length, 1);
        assert.equal(commandOf(picked[0])?.command, "flakesense.markNotFlaky");
    });

    test("finds nothing when the server offers nothing", () => {
        assert.deepEqual(actionsRunning(offered, SERVER_COMMANDS.showSimilar), []);
        assert.deepEqual(actionsRunning(undefined, SERVER_COMMANDS.showSimilar), []);
    });
});
