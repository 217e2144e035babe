/**
 * SPEC §1.1/§1.2 guard: the core (the `.` and `./store` entries and every file they reach through
 * relative imports) uses Web platform APIs only. Walks the import graph with the TypeScript parser
 * and fails on any free reference to a Node global (`Buffer`, `process`, `require`, `__dirname`, …),
 * `btoa`/`atob`, `setImmediate`, a `node:` or Node-builtin import, a bare import that is not a
 * runtime dependency, or any import of `src/node/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const NODE_DIR = join(SRC, 'node');
const ENTRIES = ['src/index.ts', 'src/store/index.ts', 'src/editor/index.ts', 'src/editor/dom/index.ts', 'src/edge/client.ts'];
const RUNTIME_DEPENDENCIES = new Set(
  Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: object }).dependencies ?? {}),
);

/** Globals the core must never touch (SPEC §1.1). */
const FORBIDDEN_GLOBALS = new Set([
  'Buffer',
  'process',
  'require',
  'module',
  'exports',
  'btoa',
  'atob',
  'setImmediate',
  'clearImmediate',
  '__dirname',
  '__filename',
  'global',
  'NodeJS',
]);
const NODE_BUILTINS = new Set(builtinModules.flatMap((m) => [m, m.split('/')[0]!]));

interface Finding {
  file: string;
  line: number;
  problem: string;
}

/** The global object names a property of which is a global reference. */
const GLOBAL_OBJECTS = ['globalThis', 'self', 'window', 'global'];

/** `expression` without parentheses, type assertions (`as`, `satisfies`, `<T>`) or `!`: `(globalThis as X)` is `globalThis`. */
function unwrapped(expression: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(expression) || ts.isAsExpression(expression) || ts.isSatisfiesExpression(expression) || ts.isTypeAssertionExpression(expression) || ts.isNonNullExpression(expression)) {
    expression = expression.expression;
  }
  return expression;
}

/** Whether `expression` is the global object, however wrapped. */
function isGlobalObject(expression: ts.Expression): boolean {
  const target = unwrapped(expression);
  return ts.isIdentifier(target) && GLOBAL_OBJECTS.includes(target.text);
}

/** Is this identifier a property name or declaration name rather than a reference to a global? */
function isNonReferencePosition(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (parent === undefined) return false;
  if ((ts.isPropertyAccessExpression(parent) || ts.isQualifiedName(parent)) && parent.name === node) {
    // `x.process` is fine, but `globalThis.process` / `self.Buffer` is a global reference.
    if (ts.isPropertyAccessExpression(parent)) return !isGlobalObject(parent.expression);
    return !(ts.isIdentifier(parent.left) && GLOBAL_OBJECTS.includes(parent.left.text));
  }
  if (
    (ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent) ||
      ts.isGetAccessorDeclaration(parent) ||
      ts.isSetAccessorDeclaration(parent) ||
      ts.isEnumMember(parent)) &&
    parent.name === node
  ) {
    return true;
  }
  if (ts.isBindingElement(parent) && parent.propertyName === node) return true;
  if ((ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent)) && parent.propertyName === node) return true;
  if (ts.isLabeledStatement(parent) || ts.isBreakOrContinueStatement(parent)) return true;
  return false;
}

/** Checks one source text; returns its findings and the module specifiers it imports. */
function inspectSource(file: string, text: string): { findings: Finding[]; specifiers: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const findings: Finding[] = [];
  const specifiers: string[] = [];
  const report = (node: ts.Node, problem: string) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    findings.push({ file, line: line + 1, problem });
  };
  const addSpecifier = (node: ts.Node, literal: ts.Node | undefined) => {
    if (literal !== undefined && ts.isStringLiteralLike(literal)) specifiers.push(literal.text);
    else if (literal !== undefined) report(node, 'non-literal module specifier');
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier !== undefined) addSpecifier(node, node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node)) {
      report(node, '`import = require()`');
      if (ts.isExternalModuleReference(node.moduleReference)) addSpecifier(node, node.moduleReference.expression);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      addSpecifier(node, node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      addSpecifier(node, node.argument.literal);
    } else if (ts.isIdentifier(node) && FORBIDDEN_GLOBALS.has(node.text) && !isNonReferencePosition(node)) {
      report(node, `references \`${node.text}\``);
    } else if (
      ts.isElementAccessExpression(node) &&
      isGlobalObject(node.expression) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      FORBIDDEN_GLOBALS.has(node.argumentExpression.text)
    ) {
      report(node, `references \`${node.argumentExpression.text}\``);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // Triple-slash references pull in global Node types.
  for (const ref of source.typeReferenceDirectives) {
    if (ref.fileName === 'node') findings.push({ file, line: 1, problem: '/// <reference types="node" />' });
  }
  return { findings, specifiers };
}

function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => existsSync(c) && /\.(ts|mts)$/.test(c));
}

/** Walks the core's import graph from the entries; returns every file reached and all findings. */
function walkCore(): { files: string[]; findings: Finding[] } {
  const seen = new Set<string>();
  const findings: Finding[] = [];
  const queue = ENTRIES.map((e) => join(ROOT, e));
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const rel = relative(ROOT, file);
    if (file === NODE_DIR || file.startsWith(NODE_DIR + '/')) {
      findings.push({ file: rel, line: 1, problem: 'is under src/node/ but reached from the core' });
      continue;
    }
    const { findings: own, specifiers } = inspectSource(rel, readFileSync(file, 'utf8'));
    findings.push(...own);
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier);
        if (target === undefined) findings.push({ file: rel, line: 1, problem: `cannot resolve import '${specifier}'` });
        else queue.push(target);
      } else if (specifier.startsWith('node:') || NODE_BUILTINS.has(specifier) || NODE_BUILTINS.has(specifier.split('/')[0]!)) {
        findings.push({ file: rel, line: 1, problem: `imports Node built-in '${specifier}'` });
      } else {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!RUNTIME_DEPENDENCIES.has(name)) {
          findings.push({ file: rel, line: 1, problem: `imports '${specifier}', which is not a runtime dependency` });
        }
      }
    }
  }
  return { files: [...seen].map((f) => relative(ROOT, f)).sort(), findings };
}

const format = (findings: Finding[]) => findings.map((f) => `${f.file}:${f.line}: ${f.problem}`);

describe('core uses Web APIs only (SPEC §1.1, §1.2)', () => {
  it('walks the whole core import graph', () => {
    const { files } = walkCore();
    expect(files).toEqual(expect.arrayContaining(['src/index.ts', 'src/store/index.ts', 'src/uri.ts', 'src/base64url.ts']));
    expect(files.length).toBeGreaterThan(10);
  });

  it('has no Node globals, Node imports, or src/node imports in any core file', () => {
    expect(format(walkCore().findings)).toEqual([]);
  });

  describe('the checker itself', () => {
    const problems = (text: string) => format(inspectSource('x.ts', text).findings);

    it.each([
      ['Buffer.from("a")', 'references `Buffer`'],
      ['const e = process.env.X;', 'references `process`'],
      ['const m = require("fs");', 'references `require`'],
      ['btoa("x"); ', 'references `btoa`'],
      ['atob("eA");', 'references `atob`'],
      ['setImmediate(() => {});', 'references `setImmediate`'],
      ['console.log(__dirname);', 'references `__dirname`'],
      ['const b = globalThis.Buffer;', 'references `Buffer`'],
      ['const b = globalThis["process"];', 'references `process`'],
      ['const s = (globalThis as { setImmediate?: unknown }).setImmediate;', 'references `setImmediate`'],
      ['const p = (<any>self)["process"];', 'references `process`'],
      ['let t: NodeJS.Timeout;', 'references `NodeJS`'],
      ['import x = require("y");', '`import = require()`'],
    ])('flags %s', (text, problem) => {
      expect(problems(text).join('\n')).toContain(problem);
    });

    it('does not flag property names, comments or strings', () => {
      const text = [
        '// Buffer.from(x) is what dsh uses; process.env is not read',
        'const o = { process: 1, Buffer: 2 };',
        'o.process; o.Buffer;',
        "const s = 'Buffer and process';",
        'interface I { process: number; require(): void }',
        'const { process: p } = o;',
      ].join('\n');
      expect(problems(text)).toEqual([]);
    });

    it('collects static, dynamic, re-export and type-only specifiers', () => {
      const { specifiers } = inspectSource(
        'x.ts',
        "import a from './a.js'; export * from 'node:fs'; import type { T } from '../node/x.js'; const m = import('./d.js'); type U = import('./e.js').U;",
      );
      expect(specifiers).toEqual(['./a.js', 'node:fs', '../node/x.js', './d.js', './e.js']);
    });
  });
});
