// Starts `flopkb lsp` for the YAML files of the workspace (see docs/editors.md).
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("flopkb").get("command");
  client = new LanguageClient(
    "flopkb",
    "flopkb",
    { command, args },
    { documentSelector: [{ scheme: "file", language: "yaml" }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
