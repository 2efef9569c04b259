/**
 * Finds the `flakesense` executable: `flakesense.path` when set, else `flakesense` on `PATH`, else
 * where `cargo install` puts it (`~/.cargo/bin`), which an editor started from a desktop menu often
 * lacks on its `PATH`.
 *
 * The file system is passed in, so that the search is tested without touching the disk.
 */

import * as path from "node:path";

import { expandPath, PathContext } from "./settings";

/** The environment the search reads. */
export interface SearchEnvironment extends PathContext {
    /** The `PATH` variable. */
    pathVariable?: string;
    /** The `PATHEXT` variable (Windows only). */
    pathExtensions?: string;
    platform: NodeJS.Platform;
    /** Whether a path names an executable file. */
    isExecutable: (file: string) => boolean;
}

export type ServerPath = { found: true; path: string } | { found: false; reason: string; searched: string[] };

/** How to get the server, for the message shown when it is missing. */
export const INSTALL_HINT =
    "Install it with `cargo install --locked --path <your flakesense checkout>` " +
    "(it lands in ~/.cargo/bin), or set `flakesense.path` to the executable";

/** Resolves the server executable from the `flakesense.path` setting (empty: search). */
export function resolveServerPath(configured: string | undefined, environment: SearchEnvironment): ServerPath {
    const setting = configured?.trim() ?? "";
    if (setting !== "") {
        // A bare name ("flakesense-nightly") is looked up on PATH like a shell would; anything with a
        // separator, `~` or a variable is a path.
        const isBareName = !/[\\/~]/.test(setting) && !setting.includes("${");
        if (isBareName) {
            const onPath = searchPath(setting, environment);
            if (onPath.found) {
                return onPath;
            }
            return {
                found: false,
                reason: `flakesense.path is "${setting}", which is not on PATH`,
                searched: onPath.searched,
            };
        }
        const file = expandPath(setting, environment);
        if (environment.isExecutable(file)) {
            return { found: true, path: file };
        }
        return {
            found: false,
            reason: `flakesense.path is "${setting}", but ${file} is not an executable file`,
            searched: [file],
        };
    }

    const onPath = searchPath("flakesense", environment);
    if (onPath.found) {
        return onPath;
    }
    const searched = [...onPath.searched];
    if (environment.homeDirectory !== undefined) {
        for (const candidate of executableNames("flakesense", environment)) {
            const file = path.join(environment.homeDirectory, ".cargo", "bin", candidate);
            searched.push(file);
            if (environment.isExecutable(file)) {
                return { found: true, path: file };
            }
        }
    }
    return { found: false, reason: "the flakesense executable is neither on PATH nor in ~/.cargo/bin", searched };
}

function searchPath(name: string, environment: SearchEnvironment): ServerPath {
    const delimiter = environment.platform === "win32" ? ";" : ":";
    const directories = (environment.pathVariable ?? "").split(delimiter).filter((directory) => directory !== "");
    const searched: string[] = [];
    for (const directory of directories) {
        for (const candidate of executableNames(name, environment)) {
            const file = path.join(directory, candidate);
            searched.push(file);
            if (environment.isExecutable(file)) {
                return { found: true, path: file };
            }
        }
    }
    return { found: false, reason: `${name} is not on PATH`, searched };
}

function executableNames(name: string, environment: SearchEnvironment): string[] {
    if (environment.platform !== "win32" || path.extname(name) !== "") {
        return [name];
    }
    const extensions = (environment.pathExtensions ?? ".EXE;.CMD;.BAT").split(";").filter((extension) => extension !== "");
    return extensions.map((extension) => name + extension.toLowerCase());
}
