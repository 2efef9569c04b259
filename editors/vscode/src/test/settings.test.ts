/**
 * The mapping from VS Code's settings to the server's: what is sent, what is left out, and that
 * the keys are the ones the server's `src/config.rs` accepts.
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
const repositoryRoot = path.join(extensionRoot, "..", "..");

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

describe("the contract with the server and the manifest", () => {
    test("every key sent is one that src/config.rs accepts", () => {
        const configRs = fs.readFileSync(path.join(repositoryRoot, "src", "config.rs"), "utf8");
        const accepted = new Set<string>();
        for (const match of configRs.matchAll(/alias\s*=\s*"([A-Za-z]+)"/g)) {
            accepted.add(match[1]);
        }
        for (const match of configRs.matchAll(/pub\s+([a-z_]+)\s*:/g)) {
            // Fields without an alias are accepted under their (kebab-case) name; single words are
            // the same in every case.
            if (!match[1].includes("_")) {
                accepted.add(match[1]);
            }
        }
        for (const key of SERVER_SETTING_KEYS) {
            assert.ok(accepted.has(key), `src/config.rs does not accept "${key}" (accepts ${[...accepted].join(", ")})`);
        }
    });

    test("package.json declares every setting with the server's defaults", () => {
        const manifest = JSON.parse(fs.readFileSync(path.join(extensionRoot, "package.json"), "utf8"));
        const properties = manifest.contributes.configuration.properties;
        for (const key of SERVER_SETTING_KEYS) {
            assert.ok(properties[`flakesense.${key}`], `package.json lacks flakesense.${key}`);
        }
        assert.equal(properties["flakesense.warningThreshold"].default, 0.95);
        assert.equal(properties["flakesense.informationThreshold"].default, 0.5);
        assert.equal(properties["flakesense.k"].default, 7);
        assert.ok(properties["flakesense.path"]);
        assert.ok(properties["flakesense.trace.server"]);
    });

    test("no client command takes the id of a server command", () => {
        const manifest = JSON.parse(fs.readFileSync(path.join(extensionRoot, "package.json"), "utf8"));
        const clientCommands: string[] = manifest.contributes.commands.map((entry: { command: string }) => entry.command);
        for (const serverCommand of ["flakesense.markFlaky", "flakesense.markNotFlaky", "flakesense.showSimilar"]) {
            assert.ok(!clientCommands.includes(serverCommand), `${serverCommand} is the server's`);
        }
    });
});
