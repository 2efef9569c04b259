/**
 * The VS Code client of `flakesense serve`: starts the server for Java, Python and Rust files,
 * passes it the `flakesense.*` settings, and adds palette commands around the server's own.
 *
 * The server's commands (`flakesense.markFlaky`, `flakesense.markNotFlaky`,
 * `flakesense.showSimilar`) are registered by vscode-languageclient from the server's
 * `executeCommandProvider`, which is how the code actions of the light bulb run them. This
 * extension must therefore never register commands with those ids itself.
 */

import * as fs from "node:fs";
import * as os from "node:os";

import * as vscode from "vscode";
import {
    DidChangeConfigurationNotification,
    LanguageClient,
    LanguageClientOptions,
    ServerOptions,
    TransportKind,
} from "vscode-languageclient/node";

import { actionsRunning, commandOf, SERVER_COMMANDS } from "./code-actions";
import { INSTALL_HINT, resolveServerPath } from "./server-path";
import { configurationAnswer, explicitValue, MappedSettings, PathContext, toServerSettings } from "./settings";

const SECTION = "flakesense";
const LANGUAGES = ["java", "python", "rust"];

let server: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = vscode.window.createOutputChannel("flakesense", { log: true });
    server = new ServerController(output);
    const controller = server;
    context.subscriptions.push(
        output,
        vscode.commands.registerCommand("flakesense.restartServer", () => controller.restart()),
        vscode.commands.registerCommand("flakesense.showOutput", () => output.show(true)),
        vscode.commands.registerCommand("flakesense.markFlakyAtCursor", () =>
            runServerCommandAtCursor(controller, SERVER_COMMANDS.markFlaky, "mark as flaky"),
        ),
        vscode.commands.registerCommand("flakesense.markNotFlakyAtCursor", () =>
            runServerCommandAtCursor(controller, SERVER_COMMANDS.markNotFlaky, "mark as not flaky"),
        ),
        vscode.commands.registerCommand("flakesense.showSimilarAtCursor", () =>
            runServerCommandAtCursor(controller, SERVER_COMMANDS.showSimilar, "compare with known tests"),
        ),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (event.affectsConfiguration(`${SECTION}.path`)) {
                void controller.restart();
            } else if (event.affectsConfiguration(SECTION) && !event.affectsConfiguration(`${SECTION}.trace`)) {
                // vscode-languageclient follows `flakesense.trace.server` by itself.
                void controller.pushSettings();
            }
        }),
    );
    // Not awaited: a missing or broken server is reported to the user, and the commands stay usable
    // (Restart server retries once the binary is installed).
    void controller.start();
}

export function deactivate(): Promise<void> | undefined {
    return server?.stop();
}

/** Owns the one language client; start, stop and restart are serialised. */
class ServerController {
    private client: LanguageClient | undefined;
    private watcher: vscode.FileSystemWatcher | undefined;
    private queue: Promise<void> = Promise.resolve();
    private lastProblems = "";

    constructor(private readonly output: vscode.LogOutputChannel) {}

    isRunning(): boolean {
        return this.client?.isRunning() ?? false;
    }

    start(): Promise<void> {
        return this.enqueue(() => this.startNow());
    }

    stop(): Promise<void> {
        return this.enqueue(() => this.stopNow());
    }

    restart(): Promise<void> {
        return this.enqueue(async () => {
            await this.stopNow();
            await this.startNow();
        });
    }

    /** Sends the whole editor layer of settings again, after the user changed one. */
    async pushSettings(): Promise<void> {
        const client = this.client;
        const mapped = this.settings();
        if (client === undefined || !client.isRunning()) {
            return;
        }
        // Keyed by section, as vscode-languageclient's own synchronisation would send it.
        await client.sendNotification(DidChangeConfigurationNotification.type, {
            settings: { [SECTION]: mapped.settings },
        });
    }

    private enqueue(step: () => Promise<void>): Promise<void> {
        this.queue = this.queue.then(step, step);
        return this.queue;
    }

    /** The settings for the server; problems are shown once each time they change. */
    private settings(): MappedSettings {
        const configuration = vscode.workspace.getConfiguration(SECTION);
        const mapped = toServerSettings((key) => explicitValue(configuration.inspect(key)), pathContext());
        const problems = mapped.problems.join("; ");
        if (problems !== this.lastProblems) {
            this.lastProblems = problems;
            if (problems !== "") {
                this.output.warn(`settings ignored: ${problems}`);
                void vscode.window.showWarningMessage(`flakesense: ${problems}`, "Open Settings").then((choice) => {
                    if (choice === "Open Settings") {
                        void vscode.commands.executeCommand("workbench.action.openSettings", SECTION);
                    }
                });
            }
        }
        return mapped;
    }

    private async startNow(): Promise<void> {
        const configured = vscode.workspace.getConfiguration(SECTION).get<string>("path");
        const located = resolveServerPath(configured, {
            ...pathContext(),
            pathVariable: process.env.PATH,
            pathExtensions: process.env.PATHEXT,
            platform: process.platform,
            isExecutable,
        });
        if (!located.found) {
            this.output.error(`${located.reason}. Looked at:`);
            for (const file of located.searched) {
                this.output.error(`    ${file}`);
            }
            void this.reportMissingServer(located.reason);
            return;
        }

        const serverOptions: ServerOptions = {
            command: located.path,
            args: ["serve"],
            transport: TransportKind.stdio,
            options: { cwd: pathContext().workspaceFolder },
        };
        this.watcher = vscode.workspace.createFileSystemWatcher(`**/flakesense.toml`);
        const clientOptions: LanguageClientOptions = {
            documentSelector: LANGUAGES.map((language) => ({ scheme: "file", language })),
            // A function, so that every (re)start sends the settings of that moment.
            initializationOptions: () => this.settings().settings,
            outputChannel: this.output,
            synchronize: { fileEvents: this.watcher },
            middleware: {
                workspace: {
                    // VS Code would answer with the raw `flakesense` section, `path` and `trace`
                    // included, and with defaults that would override `flakesense.toml`.
                    configuration: async (params, token, next) => {
                        const settings = this.settings().settings;
                        const answers = params.items.map((item) => configurationAnswer(item.section, settings));
                        if (answers.every((answer) => answer !== undefined)) {
                            return answers;
                        }
                        const fromVsCode = await next(params, token);
                        if (!Array.isArray(fromVsCode)) {
                            return fromVsCode;
                        }
                        return answers.map((answer, index) => (answer !== undefined ? answer : fromVsCode[index]));
                    },
                },
            },
        };

        const client = new LanguageClient("flakesense", "flakesense", serverOptions, clientOptions);
        this.client = client;
        this.output.info(`starting ${located.path} serve`);
        try {
            await client.start();
        } catch (error) {
            this.output.error(`the server did not start: ${messageOf(error)}`);
            await this.stopNow();
            const choice = await vscode.window.showErrorMessage(
                `flakesense: ${located.path} serve did not start: ${messageOf(error)}`,
                "Show Output",
            );
            if (choice === "Show Output") {
                this.output.show(true);
            }
        }
    }

    private async stopNow(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.watcher?.dispose();
        this.watcher = undefined;
        if (client === undefined) {
            return;
        }
        try {
            // Disposing also unregisters the server's commands, so that a new client can register them.
            await client.dispose(2000);
        } catch (error) {
            this.output.warn(`stopping the server: ${messageOf(error)}`);
        }
    }

    private async reportMissingServer(reason: string): Promise<void> {
        const choice = await vscode.window.showErrorMessage(
            `flakesense: ${reason}. ${INSTALL_HINT}.`,
            "Open Settings",
            "Retry",
            "Show Output",
        );
        if (choice === "Open Settings") {
            await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.path`);
        } else if (choice === "Retry") {
            await this.restart();
        } else if (choice === "Show Output") {
            this.output.show(true);
        }
    }
}

/** Runs a server command through the code action the server offers at the cursor. */
async function runServerCommandAtCursor(controller: ServerController, serverCommand: string, what: string): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined || !LANGUAGES.includes(editor.document.languageId)) {
        void vscode.window.showInformationMessage("flakesense: put the cursor in a test of a Java, Python or Rust file");
        return;
    }
    if (!controller.isRunning()) {
        void vscode.window.showWarningMessage("flakesense: the server is not running (see flakesense: Show output)");
        return;
    }
    const offered = await vscode.commands.executeCommand<(vscode.Command | vscode.CodeAction)[] | undefined>(
        "vscode.executeCodeActionProvider",
        editor.document.uri,
        editor.selection,
        undefined,
        // Resolve lazily filled actions too, so that their edits and commands are complete.
        20,
    );
    const matching = actionsRunning(offered, serverCommand);
    if (matching.length === 0) {
        void vscode.window.showInformationMessage(`flakesense: no test at the cursor to ${what}`);
        return;
    }
    let chosen = matching[0];
    if (matching.length > 1) {
        const picked = await vscode.window.showQuickPick(
            matching.map((action) => ({ label: action.title, action })),
            { placeHolder: `flakesense: ${what}` },
        );
        if (picked === undefined) {
            return;
        }
        chosen = picked.action;
    }
    if ("edit" in chosen && chosen.edit !== undefined) {
        await vscode.workspace.applyEdit(chosen.edit);
    }
    const command = commandOf(chosen);
    if (command !== undefined) {
        await vscode.commands.executeCommand(command.command, ...(command.arguments ?? []));
    }
}

function pathContext(): PathContext {
    return {
        workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
        homeDirectory: os.homedir(),
    };
}

function isExecutable(file: string): boolean {
    try {
        if (!fs.statSync(file).isFile()) {
            return false;
        }
        if (process.platform !== "win32") {
            fs.accessSync(file, fs.constants.X_OK);
        }
        return true;
    } catch {
        return false;
    }
}

function messageOf(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}
