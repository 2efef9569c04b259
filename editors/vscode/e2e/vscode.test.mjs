/**
 * The extension inside a real VS Code: code-server (VS Code's own workbench, served to a browser)
 * installs the packaged .vsix, opens a copy of the repository's tests/fixtures/demo, and Debian's
 * Chromium, driven by playwright-core, reads what a user sees from the page's DOM: the warning on
 * the flaky test's name in the Problems panel, the hover, the code actions on it and on another
 * test, and that picking "Mark as flaky" there writes `.flakesense/index` and adds that test's
 * warning.
 * Screenshots of each step go to $E2E_OUT (default: target/vscode-e2e in the repository).
 *
 * Inputs: $FLAKESENSE, the server binary (default: target/debug/flakesense, then `flakesense` on
 * PATH); $VSIX, the packaged extension (default: packed from ../ by vsce, which bundles it first).
 * Without Chromium or code-server (`./install.sh` in this folder, see README.md) the tests are
 * skipped with a note; `.ci/run` installs both.
 */

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionRoot = path.join(here, "..");
const repositoryRoot = path.join(here, "..", "..", "..");
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const codeServerPath = path.join(here, "node_modules", ".bin", "code-server");
const outputDirectory = process.env.E2E_OUT ?? path.join(repositoryRoot, "target", "vscode-e2e");

const FILE = "tests/test_status_page.py";
const FLAGGED = "test_status_page_reports_healthy_after_restart";
const MARKED = "test_formats_uptime";
// Where the two test names start in FILE, as the Problems panel writes it.
const FLAGGED_AT = "[Ln 6, Col 5]";
const MARKED_AT = "[Ln 13, Col 5]";

function missingTool() {
    if (!fs.existsSync(chromiumPath)) {
        return `Chromium is not installed at ${chromiumPath} (apt-get install chromium)`;
    }
    if (!fs.existsSync(codeServerPath)) {
        return "code-server is not installed (npm ci in editors/vscode/e2e, see its README.md)";
    }
    return undefined;
}

function serverBinary() {
    if (process.env.FLAKESENSE) {
        return process.env.FLAKESENSE;
    }
    const built = path.join(repositoryRoot, "target", "debug", "flakesense");
    if (fs.existsSync(built)) {
        return built;
    }
    const found = spawnSync("sh", ["-c", "command -v flakesense"], { encoding: "utf8" }).stdout.trim();
    assert.ok(found, "no flakesense binary: set FLAKESENSE, or cargo build");
    return found;
}

function packagedExtension(work) {
    if (process.env.VSIX) {
        return process.env.VSIX;
    }
    const vsix = path.join(work, "flakesense.vsix");
    const packed = spawnSync(
        "npx",
        ["vsce", "package", "--no-dependencies", "--allow-missing-repository", "--out", vsix],
        { cwd: extensionRoot, encoding: "utf8" },
    );
    assert.equal(packed.status, 0, `vsce package failed:\n${packed.stdout}\n${packed.stderr}`);
    return vsix;
}

async function freePort() {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.on("error", reject);
        server.listen(0, "127.0.0.1", () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

async function eventually(what, probe, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    let last;
    while (Date.now() < deadline) {
        last = await probe();
        if (last) {
            return last;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.fail(`${what} within ${timeoutMs / 1000} s`);
}

const skip = missingTool();
if (skip) {
    console.log(`skipped: ${skip}`);
}

describe("the extension in VS Code (code-server)", { skip }, () => {
    let work;
    let workspace;
    let codeServer;
    let browser;
    let page;
    let step = 0;
    // What code-server printed; and whether a failed step has shown the logs yet.
    let codeServerLog = "";
    let logsShown = false;

    async function screenshot(name) {
        step += 1;
        await page.screenshot({ path: path.join(outputDirectory, `${step}-${name}.png`) });
    }

    /**
     * Prints, once, what explains a failure where only this test's output is kept (CI): the end of
     * code-server's log, and of the logs of the extension host and of flakesense's output channel,
     * which say whether the server started and what it reported. All logs go to `$E2E_OUT/logs`.
     */
    function showLogs() {
        if (logsShown || !work) {
            return;
        }
        logsShown = true;
        const tail = (text, lines) => text.split("\n").slice(-lines).join("\n");
        console.error(`--- code-server's log, its end:\n${tail(codeServerLog, 40)}`);
        const logs = path.join(work, "user-data", "logs");
        if (!fs.existsSync(logs)) {
            return;
        }
        fs.cpSync(logs, path.join(outputDirectory, "logs"), { recursive: true });
        const files = fs.readdirSync(logs, { recursive: true }).map((file) => path.join(logs, String(file)));
        for (const file of files.filter((file) => /(flakesense\.log|remoteexthost\.log)$/.test(file))) {
            console.error(`--- ${path.relative(logs, file)}, its end:\n${tail(fs.readFileSync(file, "utf8"), 60)}`);
        }
    }

    /**
     * Runs a step; when it fails, the page as it was goes to `failed-<name>.png`, and the logs are
     * shown (see showLogs).
     */
    function checked(name, body) {
        return async () => {
            try {
                await body();
            } catch (error) {
                await page?.screenshot({ path: path.join(outputDirectory, `failed-${name}.png`) }).catch(() => {});
                showLogs();
                throw error;
            }
        };
    }

    /** The rows of the Problems panel, as text. */
    async function problems() {
        return page.locator(".markers-panel .monaco-list-row").allInnerTexts();
    }

    /** How many elements `selector` finds that are visible. */
    function visible(selector) {
        return page.locator(`${selector}:visible`).count();
    }

    /** The rendered token of the editor that is exactly `text`. */
    function token(text) {
        return page.locator(".monaco-editor .view-lines span", { hasText: new RegExp(`^${text}$`) }).first();
    }

    before(async () => {
        const { chromium } = await import("playwright-core");
        fs.mkdirSync(outputDirectory, { recursive: true });
        work = fs.mkdtempSync(path.join(os.tmpdir(), "flakesense-vscode-e2e-"));
        workspace = path.join(work, "demo");
        fs.cpSync(path.join(repositoryRoot, "tests", "fixtures", "demo"), workspace, { recursive: true });
        const userData = path.join(work, "user-data");
        fs.mkdirSync(path.join(userData, "User"), { recursive: true });
        fs.writeFileSync(
            path.join(userData, "User", "settings.json"),
            JSON.stringify(
                {
                    "flakesense.path": serverBinary(),
                    "workbench.startupEditor": "none",
                    "security.workspace.trust.enabled": false,
                    "telemetry.telemetryLevel": "off",
                    "extensions.autoUpdate": false,
                    "extensions.autoCheckUpdates": false,
                    "update.mode": "none",
                },
                null,
                2,
            ),
        );
        // code-server keeps its own files under these; none goes to the user's home.
        const environment = {
            ...process.env,
            XDG_CONFIG_HOME: path.join(work, "config"),
            XDG_DATA_HOME: path.join(work, "data"),
        };
        const common = [
            "--config", path.join(work, "config.yaml"),
            "--user-data-dir", userData,
            "--extensions-dir", path.join(work, "extensions"),
        ];
        const installed = spawnSync(codeServerPath, [...common, "--install-extension", packagedExtension(work)], {
            env: environment,
            encoding: "utf8",
        });
        assert.equal(installed.status, 0, `installing the .vsix failed:\n${installed.stdout}\n${installed.stderr}`);
        assert.match(installed.stdout, /successfully installed/);

        const port = await freePort();
        codeServer = spawn(
            codeServerPath,
            [
                ...common,
                "--auth", "none",
                "--bind-addr", `127.0.0.1:${port}`,
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                workspace,
            ],
            { env: environment, detached: true, stdio: ["ignore", "pipe", "pipe"] },
        );
        codeServer.stdout.on("data", (chunk) => (codeServerLog += chunk));
        codeServer.stderr.on("data", (chunk) => (codeServerLog += chunk));
        await eventually("code-server listening", () => codeServerLog.includes("HTTP server listening"), 60_000);

        browser = await chromium.launch({
            executablePath: chromiumPath,
            // The flags this machine's Chromium needs: no sandbox as root, no GPU, and no
            // background connections, which the closed network refuses.
            args: [
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        });
        page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
        await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    });

    after(async () => {
        await browser?.close();
        if (codeServer?.pid) {
            // code-server, its extension host and the language server form one process group.
            try {
                process.kill(-codeServer.pid, "SIGTERM");
            } catch {
                // Already gone.
            }
        }
        if (work) {
            fs.rmSync(work, { recursive: true, force: true });
        }
    });

    it("shows the warning on the flaky test's name", checked("warning", async () => {
        await page.keyboard.press("Control+P");
        await page.locator(".quick-input-widget input").waitFor();
        await page.keyboard.type(path.basename(FILE));
        await page.locator(".quick-input-list .monaco-list-row", { hasText: path.basename(FILE) }).first().click();
        await page.locator(".monaco-editor .squiggly-warning").first().waitFor({ timeout: 90_000 });
        await page.keyboard.press("Control+Shift+M");
        const rows = await eventually(
            "a flakesense problem on the flaky test's name",
            async () => {
                const rows = await problems();
                return rows.some((row) => row.includes("flakesense") && row.includes(FLAGGED_AT)) && rows;
            },
            30_000,
        );
        assert.ok(!rows.some((row) => row.includes(MARKED_AT)), `the other test is not flagged yet: ${rows}`);
        await screenshot("warning");
    }));

    it("shows the hover on the test's name", checked("hover", async () => {
        await token(FLAGGED).hover();
        const hover = page.locator(".monaco-hover:visible", { hasText: "flakesense" }).first();
        await hover.waitFor({ timeout: 15_000 });
        const text = await hover.innerText();
        assert.match(text, /similarity/, text);
        await screenshot("hover");
        // Away from the name, so that the hover closes and frees the other test's name.
        await page.mouse.move(5, 450);
        await page.keyboard.press("Escape");
        await eventually("the hover closed", async () => (await visible(".monaco-hover")) === 0, 15_000);
    }));

    /** Where the status bar says the cursor is ("Ln 13, Col 9"). */
    function cursor() {
        return page.locator(".statusbar-item", { hasText: /^Ln \d+, Col \d+/ }).first().innerText();
    }

    /**
     * The titles of the code actions offered (Ctrl+.) with the cursor on `name`, which starts at
     * `at` ("[Ln 13, Col 5]"). Ctrl+. waits, as a user does, until the editor has the cursor on
     * that line and shows the light bulb there: pressed at once after the click, it sometimes met
     * "No code actions available" on CI's first, cold run, with the light bulb shown beside it.
     * A failure says where the cursor was and what the editor said.
     */
    async function codeActions(name, at) {
        const line = at.match(/Ln (\d+)/)[1];
        await token(name).click();
        await eventually(`the cursor on line ${line}`, async () => (await cursor()).startsWith(`Ln ${line},`), 15_000);
        await page.locator(".lightBulbWidget:visible").first().waitFor({ timeout: 15_000 });
        await page.keyboard.press("Control+.");
        const rows = page.locator(".action-widget .monaco-list-row:visible");
        try {
            await rows.first().waitFor({ timeout: 15_000 });
        } catch (error) {
            const message = await page.locator(".monaco-editor-overlaymessage:visible").allInnerTexts();
            assert.fail(`no code action menu after Ctrl+. at ${await cursor()}; the editor said ${JSON.stringify(message)}: ${error.message}`);
        }
        return rows.allInnerTexts();
    }

    it("offers the code actions of a flagged test", checked("flagged-actions", async () => {
        const titles = await codeActions(FLAGGED, FLAGGED_AT);
        for (const expected of ["Show similar", "Mark as flaky", "Mark as not flaky", "Ignore this test"]) {
            assert.ok(titles.some((title) => title.startsWith(expected)), `no "${expected}..." among ${titles}`);
        }
        await screenshot("flagged-actions");
        await page.keyboard.press("Escape");
        await eventually("the menu closed", async () => (await visible(".action-widget .monaco-list-row")) === 0, 15_000);
    }));

    it("offers the code actions on another test, and Mark as flaky labels it", checked("mark", async () => {
        const titles = await codeActions(MARKED, MARKED_AT);
        assert.ok(titles.some((title) => title.startsWith("Mark as flaky")), `code actions: ${titles}`);
        await screenshot("code-actions");

        // Down to "Mark as flaky" and Enter, as a user picks it from the light bulb's menu.
        for (let presses = 0; presses < titles.length; presses += 1) {
            const focused = await page.locator(".action-widget .monaco-list-row.focused").innerText();
            if (focused.startsWith("Mark as flaky")) {
                break;
            }
            await page.keyboard.press("ArrowDown");
        }
        await page.keyboard.press("Enter");
        const index = path.join(workspace, ".flakesense", "index");
        await eventually("the label in .flakesense/index", () => fs.existsSync(index), 30_000);
        const after = await eventually(
            "a flakesense problem on the marked test's name",
            async () => {
                const rows = await problems();
                return rows.some((row) => row.includes("flakesense") && row.includes(MARKED_AT)) && rows;
            },
            30_000,
        );
        assert.ok(after.some((row) => row.includes(FLAGGED_AT)), `${after}`);
        await screenshot("marked");
    }));
});
