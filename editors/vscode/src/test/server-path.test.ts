/** Finding the server executable, against a fake file system. */

import * as assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";

import { resolveServerPath, SearchEnvironment } from "../server-path";

function environment(executables: string[], overrides: Partial<SearchEnvironment> = {}): SearchEnvironment {
    const files = new Set(executables);
    return {
        pathVariable: "/usr/local/bin:/usr/bin",
        platform: "linux",
        homeDirectory: "/home/ada",
        workspaceFolder: "/work/project",
        isExecutable: (file) => files.has(file),
        ...overrides,
    };
}

describe("resolveServerPath", () => {
    test("finds flakesense on PATH, first directory first", () => {
        const found = resolveServerPath("", environment(["/usr/bin/flakesense", "/usr/local/bin/flakesense"]));
        assert.deepEqual(found, { found: true, path: "/usr/local/bin/flakesense" });
    });

    test("falls back to ~/.cargo/bin, where cargo install puts it", () => {
        const found = resolveServerPath(undefined, environment(["/home/ada/.cargo/bin/flakesense"]));
        assert.deepEqual(found, { found: true, path: "/home/ada/.cargo/bin/flakesense" });
    });

    test("says where it looked when the server is missing", () => {
        const missing = resolveServerPath("", environment([]));
        assert.equal(missing.found, false);
        if (!missing.found) {
            assert.match(missing.reason, /neither on PATH nor in ~\/\.cargo\/bin/);
            assert.deepEqual(missing.searched, [
                "/usr/local/bin/flakesense",
                "/usr/bin/flakesense",
                "/home/ada/.cargo/bin/flakesense",
            ]);
        }
    });

    test("uses flakesense.path, expanding ~ and the workspace folder", () => {
        assert.deepEqual(resolveServerPath("~/bin/flakesense", environment(["/home/ada/bin/flakesense"])), {
            found: true,
            path: "/home/ada/bin/flakesense",
        });
        assert.deepEqual(
            resolveServerPath("${workspaceFolder}/target/debug/flakesense", environment(["/work/project/target/debug/flakesense"])),
            { found: true, path: "/work/project/target/debug/flakesense" },
        );
        assert.deepEqual(resolveServerPath("target/debug/flakesense", environment(["/work/project/target/debug/flakesense"])), {
            found: true,
            path: "/work/project/target/debug/flakesense",
        });
    });

    test("does not fall back to PATH when flakesense.path names a missing file", () => {
        const missing = resolveServerPath("/opt/flakesense", environment(["/usr/bin/flakesense"]));
        assert.equal(missing.found, false);
        if (!missing.found) {
            assert.match(missing.reason, /flakesense\.path is "\/opt\/flakesense", but \/opt\/flakesense is not an executable file/);
        }
    });

    test("looks a bare name in flakesense.path up on PATH", () => {
        assert.deepEqual(resolveServerPath("flakesense-dev", environment(["/usr/bin/flakesense-dev"])), {
            found: true,
            path: "/usr/bin/flakesense-dev",
        });
    });

    test("tries PATHEXT's extensions on Windows", () => {
        const executable = path.join("C:\\tools", "flakesense.exe");
        const found = resolveServerPath(
            "",
            environment([executable], { platform: "win32", pathVariable: "C:\\tools", pathExtensions: ".COM;.EXE" }),
        );
        assert.deepEqual(found, { found: true, path: executable });
    });
});
