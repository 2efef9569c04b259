/**
 * The mapping from VS Code's settings to the server's: what is sent, what is left out, and that
 * package.json declares each key. These tests read nothing outside this folder, so they pass in a
 * copy of it; the repository's `tests/editors.rs` checks the keys against the server's.
 */

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";

import {
    configurationAnswer,
    explicitValue,
    expandPath,
    SERVER_SETTING_KEYS,
    ServerSettingKey,
    toServerSettings,
} from "../settings";

/** `read` for toServerSettings from a plain object of set values. */
function setValues(values: Partial<Record<ServerSettingKey, unknown>>): (key: ServerSettingKey) => unknown {
    return (key) => values[key];
}

const extensionRoot = path.join(__dirname, "..", "..");

describe("explicitValue", () => {
    test("is undefined when only the default applies", () => {
        assert.equal(explicitValue({ defaultValue: 0.95 }), undefined);
        assert.equal(explicitValue(undefined), undefined);
    });

    test("prefers the folder, then the workspace, then the user value", () => {
        assert.equal(explicitValue({ defaultValue: 7, globalValue: 5 }), 5);
        assert.equal(explicitValue({ defaultValue: 7, globalValue: 5, workspaceValue: 3 }), 3);
        assert.equal(explicitValue({ defaultValue: 7, globalValue: 5, workspaceValue: 3, workspaceFolderValue: 9 }), 9);
    });

    test("keeps a value set to the default, since the user chose it over flakesense.toml", () => {
        assert.equal(explicitValue({ defaultValue: 0.95, workspaceValue: 0.95 }), 0.95);
    });
});

describe("toServerSettings", () => {
    test("sends nothing when nothing is set, so that flakesense.toml and the server's defaults apply", () => {
        assert.deepEqual(toServerSettings(setValues({})), { settings: {}, problems: [] });
    });

    test("maps every setting to the server's camelCase keys", () => {
        const mapped = toServerSettings(
            setValues({
                warningThreshold: 0.9,
                informationThreshold: 0.4,
                k: 5,
                models: ["/data/flaky.idx"],
                exclude: ["vendor/**", "gen/**"],
                defaultModels: false,
                debounceMs: 0,
            }),
            { workspaceFolder: "/work/project" },
        );
        assert.deepEqual(mapped, {
            settings: {
                warningThreshold: 0.9,
                informationThreshold: 0.4,
                k: 5,
                models: ["/data/flaky.idx"],
                exclude: ["vendor/**", "gen/**"],
                defaultModels: false,
                debounceMs: 0,
            },
            problems: [],
        });
    });

    test("sends only the settings that are set", () => {
        assert.deepEqual(toServerSettings(setValues({ k: 3 })).settings, { k: 3 });
        assert.deepEqual(toServerSettings(setValues({ exclude: [] })).settings, { exclude: [] });
    });

    test("resolves model paths against the workspace folder and the home directory", () => {
        const mapped = toServerSettings(
            setValues({ models: ["ci/flaky.idx", "~/models/team.idx", "${workspaceFolder}/local.idx", "/abs.idx"] }),
            { workspaceFolder: "/work/project", homeDirectory: "/home/ada" },
        );
        assert.deepEqual(mapped.settings.models, [
            "/work/project/ci/flaky.idx",
            "/home/ada/models/team.idx",
            "/work/project/local.idx",
            "/abs.idx",
        ]);
    });

    test("keeps relative model paths without a workspace folder, for the server to resolve", () => {
        assert.deepEqual(toServerSettings(setValues({ models: ["ci/flaky.idx"] })).settings.models, ["ci/flaky.idx"]);
    });

    test("leaves out thresholds outside 0..1 and says why", () => {
        const mapped = toServerSettings(setValues({ warningThreshold: 1.5, informationThreshold: 0.2 }));
        assert.deepEqual(mapped.settings, { informationThreshold: 0.2 });
        assert.equal(mapped.problems.length, 1);
        assert.match(mapped.problems[0], /flakesense\.warningThreshold must be a number between 0 and 1, not 1\.5/);
    });

    test("leaves out both thresholds when information exceeds warning", () => {
        const mapped = toServerSettings(setValues({ warningThreshold: 0.6, informationThreshold: 0.8, k: 9 }));
        assert.deepEqual(mapped.settings, { k: 9 });
        assert.match(mapped.problems[0], /must not exceed/);
    });

    test("leaves out a k that is not a whole number of at least 1", () => {
        for (const k of [0, -1, 2.5, "7", Number.NaN]) {
            const mapped = toServerSettings(setValues({ k }));
            assert.deepEqual(mapped.settings, {}, `k = ${String(k)}`);
            assert.match(mapped.problems[0], /flakesense\.k must be a whole number/);
        }
    });

    test("leaves out a debounce that is not whole milliseconds, and a defaultModels that is not a boolean", () => {
        for (const debounceMs of [-1, 2.5, "150"]) {
            const mapped = toServerSettings(setValues({ debounceMs }));
            assert.deepEqual(mapped.settings, {}, `debounceMs = ${String(debounceMs)}`);
            assert.match(mapped.problems[0], /flakesense\.debounceMs must be a whole number of milliseconds/);
        }
        const mapped = toServerSettings(setValues({ defaultModels: "no", debounceMs: 300 }));
        assert.deepEqual(mapped.settings, { debounceMs: 300 });
        assert.match(mapped.problems[0], /flakesense\.defaultModels must be true or false/);
    });

    test("drops entries of lists that are not strings and keeps the rest", () => {
        const mapped = toServerSettings(setValues({ exclude: ["vendor/**", 3, "", " gen/** "], models: "one.idx" }));
        assert.deepEqual(mapped.settings, { exclude: ["vendor/**", "gen/**"] });
        assert.equal(mapped.problems.length, 3);
        assert.match(mapped.problems.join("\n"), /flakesense\.models must be a list of strings/);
    });
});

describe("configurationAnswer", () => {
    const settings = { k: 3, exclude: ["gen/**"] };

    test("answers the flakesense section with the mapped settings", () => {
        assert.deepEqual(configurationAnswer("flakesense", settings), settings);
        assert.equal(configurationAnswer("flakesense.k", settings), 3);
        assert.equal(configurationAnswer("flakesense.warningThreshold", settings), null);
    });

    test("leaves other sections to VS Code", () => {
        assert.equal(configurationAnswer("python", settings), undefined);
        assert.equal(configurationAnswer(undefined, settings), undefined);
    });
});

describe("expandPath", () => {
    test("expands ~ only at the start", () => {
        assert.equal(expandPath("~/bin/flakesense", { homeDirectory: "/home/ada" }), "/home/ada/bin/flakesense");
        assert.equal(expandPath("a~b", { homeDirectory: "/home/ada", workspaceFolder: "/w" }), "/w/a~b");
    });
});

describe("the manifest", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(extensionRoot, "package.json"), "utf8"));
    const properties: Record<string, { default?: unknown }> = manifest.contributes.configuration.properties;

    test("declares every setting sent to the server, and no other", () => {
        const declared = Object.keys(properties)
            .map((key) => key.slice("flakesense.".length))
            .filter((key) => key !== "path" && key !== "trace.server")
            .sort();
        assert.deepEqual(declared, [...SERVER_SETTING_KEYS].sort());
        assert.ok(properties["flakesense.path"]);
        assert.ok(properties["flakesense.trace.server"]);
    });

    test("gives the server's defaults", () => {
        // The repository's tests/editors.rs compares these with the server's own.
        assert.equal(properties["flakesense.warningThreshold"].default, 0.95);
        assert.equal(properties["flakesense.informationThreshold"].default, 0.5);
        assert.equal(properties["flakesense.k"].default, 7);
        assert.equal(properties["flakesense.defaultModels"].default, true);
        assert.equal(properties["flakesense.debounceMs"].default, 150);
    });

    test("no client command takes the id of a server command", () => {
        const clientCommands: string[] = manifest.contributes.commands.map((entry: { command: string }) => entry.command);
        for (const serverCommand of ["flakesense.markFlaky", "flakesense.markNotFlaky", "flakesense.showSimilar"]) {
            assert.ok(!clientCommands.includes(serverCommand), `${serverCommand} is the server's`);
        }
    });
});
