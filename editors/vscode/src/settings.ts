/**
 * Maps VS Code's `flakesense.*` settings to the object the language server reads from
 * `initializationOptions`, from its `workspace/configuration` requests for the section
 * `flakesense` and from `workspace/didChangeConfiguration` (the keys of `src/config.rs`).
 *
 * This module knows nothing of VS Code so that it runs, and is tested, in plain Node.
 *
 * Only the settings the user has set are sent. The server layers its settings: its defaults, then
 * `flakesense.toml` at the workspace root, then the editor's. Sending VS Code's defaults too would
 * silently override whatever the project wrote in `flakesense.toml`.
 */

import * as path from "node:path";

/** The settings object of the server's contract; every key is optional. */
export interface ServerSettings {
    warningThreshold?: number;
    informationThreshold?: number;
    k?: number;
    models?: string[];
    exclude?: string[];
    defaultModels?: boolean;
    debounceMs?: number;
}

/** The settings sent to the server, and what was wrong with the ones left out. */
export interface MappedSettings {
    settings: ServerSettings;
    /** One sentence per ignored setting, to show to the user. */
    problems: string[];
}

/**
 * The keys under `flakesense.` that travel to the server (`path` and `trace.server` stay here):
 * every field of the server's settings (`src/config.rs` in the repository), in camelCase.
 * package.json declares each; the repository's `tests/editors.rs` keeps both in step with the
 * server.
 */
export const SERVER_SETTING_KEYS = [
    "warningThreshold",
    "informationThreshold",
    "k",
    "models",
    "exclude",
    "defaultModels",
    "debounceMs",
] as const;

export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];

/**
 * The part of `WorkspaceConfiguration.inspect(key)` that says where a value was set. The
 * language-specific values are left out: flakesense's settings are not language-overridable.
 */
export interface InspectedSetting {
    defaultValue?: unknown;
    globalValue?: unknown;
    workspaceValue?: unknown;
    workspaceFolderValue?: unknown;
}

/**
 * The value the user set, following VS Code's precedence (folder over workspace over user), or
 * `undefined` when only the default applies.
 */
export function explicitValue(inspected: InspectedSetting | undefined): unknown {
    if (inspected === undefined) {
        return undefined;
    }
    return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
}

/** Where relative paths and `~` in the settings point. */
export interface PathContext {
    /** The first workspace folder, if any. */
    workspaceFolder?: string;
    /** The user's home directory. */
    homeDirectory?: string;
}

/**
 * Expands `${workspaceFolder}` and a leading `~`, then makes a relative path absolute against the
 * workspace folder. Without a workspace folder a relative path is kept as it is.
 */
export function expandPath(value: string, context: PathContext): string {
    let expanded = value.trim();
    if (context.workspaceFolder !== undefined) {
        expanded = expanded.split("${workspaceFolder}").join(context.workspaceFolder);
    }
    if (context.homeDirectory !== undefined && (expanded === "~" || /^~[\\/]/.test(expanded))) {
        expanded = path.join(context.homeDirectory, expanded.slice(1));
    }
    if (!path.isAbsolute(expanded) && context.workspaceFolder !== undefined) {
        expanded = path.join(context.workspaceFolder, expanded);
    }
    return expanded;
}

/**
 * Builds the server's settings from the values the user set.
 *
 * `read(key)` returns the explicit value of `flakesense.<key>`, or `undefined` when it is not set
 * (see {@link explicitValue}). Values the server would reject are left out and described in
 * `problems`, so that one typo does not cost every other setting.
 */
export function toServerSettings(
    read: (key: ServerSettingKey) => unknown,
    context: PathContext = {},
): MappedSettings {
    const settings: ServerSettings = {};
    const problems: string[] = [];

    for (const key of ["warningThreshold", "informationThreshold"] as const) {
        const value = read(key);
        if (value === undefined || value === null) {
            continue;
        }
        if (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1) {
            settings[key] = value;
        } else {
            problems.push(`flakesense.${key} must be a number between 0 and 1, not ${describe(value)}`);
        }
    }
    if (
        settings.warningThreshold !== undefined &&
        settings.informationThreshold !== undefined &&
        settings.informationThreshold > settings.warningThreshold
    ) {
        problems.push(
            `flakesense.informationThreshold (${settings.informationThreshold}) must not exceed ` +
                `flakesense.warningThreshold (${settings.warningThreshold}); both are ignored`,
        );
        delete settings.warningThreshold;
        delete settings.informationThreshold;
    }

    const k = read("k");
    if (k !== undefined && k !== null) {
        if (typeof k === "number" && Number.isInteger(k) && k >= 1) {
            settings.k = k;
        } else {
            problems.push(`flakesense.k must be a whole number of at least 1, not ${describe(k)}`);
        }
    }

    const defaultModels = read("defaultModels");
    if (defaultModels !== undefined && defaultModels !== null) {
        if (typeof defaultModels === "boolean") {
            settings.defaultModels = defaultModels;
        } else {
            problems.push(`flakesense.defaultModels must be true or false, not ${describe(defaultModels)}`);
        }
    }

    const debounceMs = read("debounceMs");
    if (debounceMs !== undefined && debounceMs !== null) {
        if (typeof debounceMs === "number" && Number.isInteger(debounceMs) && debounceMs >= 0) {
            settings.debounceMs = debounceMs;
        } else {
            problems.push(`flakesense.debounceMs must be a whole number of milliseconds, not ${describe(debounceMs)}`);
        }
    }

    const models = stringList(read("models"), "models", problems);
    if (models !== undefined) {
        settings.models = models.map((model) => expandPath(model, context));
    }
    const exclude = stringList(read("exclude"), "exclude", problems);
    if (exclude !== undefined) {
        settings.exclude = exclude;
    }

    return { settings, problems };
}

/**
 * The answer to one item of a `workspace/configuration` request: the whole settings object for the
 * section `flakesense`, one value for `flakesense.<key>`, and `undefined` for sections that are not
 * flakesense's (the caller asks VS Code for those).
 */
export function configurationAnswer(section: string | undefined, settings: ServerSettings): unknown {
    if (section === "flakesense") {
        return settings;
    }
    if (section !== undefined && section.startsWith("flakesense.")) {
        const key = section.slice("flakesense.".length);
        return (settings as Record<string, unknown>)[key] ?? null;
    }
    return undefined;
}

function stringList(value: unknown, key: string, problems: string[]): string[] | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (!Array.isArray(value)) {
        problems.push(`flakesense.${key} must be a list of strings, not ${describe(value)}`);
        return undefined;
    }
    const strings: string[] = [];
    for (const item of value) {
        if (typeof item === "string" && item.trim() !== "") {
            strings.push(item.trim());
        } else {
            problems.push(`flakesense.${key} ignores the entry ${describe(item)}: entries must be non-empty strings`);
        }
    }
    return strings;
}

function describe(value: unknown): string {
    if (typeof value === "string") {
        return `"${value}"`;
    }
    if (typeof value === "number") {
        return String(value);
    }
    return JSON.stringify(value) ?? String(value);
}
