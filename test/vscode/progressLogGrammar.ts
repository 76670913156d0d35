// The extension's log grammar run by the TextMate engine of the VS Code under test
// (vscode-textmate and vscode-oniguruma beside the host's own code), so a test can ask which
// scopes a token gets. The extension API has no way to read the editor's tokens.
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

interface Token {
  startIndex: number;
  endIndex: number;
  scopes: string[];
}
interface Grammar {
  tokenizeLine(line: string, state: unknown): { tokens: Token[]; ruleStack: unknown };
  /** Pairs of (start offset, metadata); the foreground colour's index is bits 15-23. */
  tokenizeLine2(line: string, state: unknown): { tokens: Uint32Array };
}

export interface LogGrammar {
  /** The scopes of the token of `line` where `text` starts. */
  scopesAt(line: string, text: string): string[];
  /** The foreground colour that token gets in one of VS Code's built-in themes (`dark_modern`). */
  colourAt(theme: string, line: string, text: string): string;
}

export async function loadLogGrammar(ext: vscode.Extension<unknown>): Promise<LogGrammar | undefined> {
  const modules = path.join(vscode.env.appRoot, 'node_modules');
  if (!fs.existsSync(path.join(modules, 'vscode-textmate')) || !fs.existsSync(path.join(modules, 'vscode-oniguruma'))) return undefined;
  const tm = require(path.join(modules, 'vscode-textmate'));
  const onig = require(path.join(modules, 'vscode-oniguruma'));
  const wasm = fs.readFileSync(path.join(modules, 'vscode-oniguruma', 'release', 'onig.wasm'));
  await onig.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength)); // a second call reuses the first
  const contributed = (ext.packageJSON.contributes.grammars as { language: string; scopeName: string; path: string }[]).find(
    (g) => g.language === 'launchpad-log',
  )!;
  const file = path.join(ext.extensionPath, contributed.path);
  const registry = new tm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new onig.OnigScanner(patterns),
      createOnigString: (s: string) => new onig.OnigString(s),
    }),
    loadGrammar: async (scope: string) =>
      scope === contributed.scopeName ? tm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file) : null,
  });
  const grammar: Grammar = await registry.loadGrammar(contributed.scopeName);
  const offset = (line: string, text: string) => {
    const at = line.indexOf(text);
    if (at < 0) throw new Error(`"${text}" is not in: ${line}`);
    return at;
  };
  let themed: string | undefined;
  return {
    scopesAt(line, text) {
      const at = offset(line, text);
      const token = grammar.tokenizeLine(line, tm.INITIAL).tokens.find((t) => t.startIndex <= at && at < t.endIndex);
      return token?.scopes ?? [];
    },
    colourAt(theme, line, text) {
      if (themed !== theme) {
        registry.setTheme({
          name: theme,
          settings: themeRules(path.join(vscode.env.appRoot, 'extensions', 'theme-defaults', 'themes', `${theme}.json`)),
        });
        themed = theme;
      }
      const at = offset(line, text);
      const tokens = grammar.tokenizeLine2(line, tm.INITIAL).tokens;
      let meta = 0;
      for (let i = 0; i < tokens.length && tokens[i]! <= at; i += 2) meta = tokens[i + 1]!;
      return registry.getColorMap()[(meta >>> 15) & 0x1ff];
    },
  };
}

/** A theme's token rules, its `include`s first (JSON with comments and trailing commas). */
function themeRules(file: string): { scope?: string | string[]; settings: object }[] {
  const json = JSON.parse(
    fs
      .readFileSync(file, 'utf8')
      .replace(/^\s*\/\/.*$/gm, '')
      .replace(/,(\s*[}\]])/g, '$1'),
  );
  const base = json.include
    ? themeRules(path.join(path.dirname(file), json.include))
    : [{ settings: { foreground: '#000001', background: '#000002' } }];
  return [...base, ...((json.tokenColors ?? []) as { scope?: string | string[]; settings: object }[])];
}
