/**
 * Picks, among the code actions offered at the cursor, the ones that run a given server command.
 *
 * The server's commands (`flakesense.markFlaky`, `flakesense.markNotFlaky`,
 * `flakesense.showSimilar`) take the document and the test's id, which only the server knows. So
 * the palette commands of this extension do not build those arguments: they ask for the code
 * actions at the cursor, as the light bulb does, and run the server's own.
 *
 * Plain objects in, plain objects out: no VS Code here, so this is tested in Node.
 */

/** A command as VS Code describes it (`vscode.Command`). */
export interface CommandLike {
    title: string;
    command: string;
    arguments?: unknown[];
}

/** What `vscode.executeCodeActionProvider` returns: commands, or code actions carrying one. */
export type ActionLike = CommandLike | { title: string; command?: CommandLike; edit?: unknown; disabled?: unknown };

/** The server commands behind the palette commands of this extension. */
export const SERVER_COMMANDS = {
    markFlaky: "flakesense.markFlaky",
    markNotFlaky: "flakesense.markNotFlaky",
    showSimilar: "flakesense.showSimilar",
} as const;

/** The command an action runs, if any. */
export function commandOf(action: ActionLike): CommandLike | undefined {
    if (typeof action.command === "string") {
        return action as CommandLike;
    }
    return action.command;
}

/**
 * The actions that run `serverCommand`, in the order offered, without disabled ones and without
 * duplicates (VS Code may list an action once per diagnostic it fixes).
 */
export function actionsRunning<Action extends ActionLike>(
    actions: readonly Action[] | undefined,
    serverCommand: string,
): Action[] {
    const picked: Action[] = [];
    const seen = new Set<string>();
    for (const action of actions ?? []) {
        if ("disabled" in action && action.disabled !== undefined) {
            continue;
        }
        const command = commandOf(action);
        if (command?.command !== serverCommand) {
            continue;
        }
        const key = JSON.stringify([action.title, command.arguments ?? []]);
        if (seen.has(key)) {
            continue;
        }
        seen.add(key);
        picked.push(action);
    }
    return picked;
}
