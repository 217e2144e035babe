/**
 * A type-level check of the installed package (test/package.node.test.ts): every optional property
 * of what a public function takes — its parameters, and the parameters of the methods of what it
 * returns (the service object, a store query, a class instance), nested objects and array items
 * included — must be declared `?: T | undefined`, so a caller compiled with
 * `exactOptionalPropertyTypes` may pass `undefined` for it (issue 22). Walked with the TypeScript
 * compiler API over the shipped declarations, so a new option of a new entry is checked without
 * editing the test. What the functions handed in answer (the host-implemented store interfaces:
 * `ObjectStoreBucket`'s listing and bodies, `SessionQuery`'s records) is walked too. Optional
 * methods of interfaces a host implements (`SessionQuery`) are not options and are left out.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** `entry fn(param).path.prop (file: declaration)` for each optional property that rejects `undefined`. */
export function optionalsRejectingUndefined(consumer: string, packageName: string, entries: readonly string[]): string[] {
  const file = join(consumer, 'public-optionals.ts');
  writeFileSync(file, entries.map((entry, i) => `import * as e${i} from '${packageName}${entry.slice(1)}';\nexport { e${i} };\n`).join(''));
  const program = ts.createProgram([file], {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const ours = (node: ts.Node) => node.getSourceFile().fileName.includes(`/node_modules/${packageName}/`);
  const acceptsUndefined = (node: ts.TypeNode): boolean =>
    node.kind === ts.SyntaxKind.UndefinedKeyword ||
    node.kind === ts.SyntaxKind.AnyKeyword ||
    node.kind === ts.SyntaxKind.UnknownKeyword ||
    (ts.isUnionTypeNode(node) && node.types.some(acceptsUndefined)) ||
    (ts.isParenthesizedTypeNode(node) && acceptsUndefined(node.type));
  const problems = new Set<string>();
  const seen = new Set<ts.Type>();

  const visit = (type: ts.Type, path: string, depth: number): void => {
    if (depth > 8 || seen.has(type)) return;
    seen.add(type);
    if (type.isUnionOrIntersection()) return type.types.forEach((member) => visit(member, path, depth + 1));
    if (checker.isArrayType(type) || checker.isTupleType(type)) {
      return checker.getTypeArguments(type as ts.TypeReference).forEach((item) => visit(item, `${path}[]`, depth + 1));
    }
    if (!(type.flags & ts.TypeFlags.Object)) return;
    const calls = type.getCallSignatures();
    if (calls.length > 0) {
      // A function handed in (a host's store method, `bucket.list`): what it answers is typed by
      // us too, and a host compiled with exactOptionalPropertyTypes may answer `undefined` in it.
      for (const call of calls) visit(checker.getAwaitedType(call.getReturnType()) ?? call.getReturnType(), `${path}()`, depth + 1);
      return;
    }
    for (const property of checker.getPropertiesOfType(type)) {
      for (const declaration of (property.declarations ?? []).filter(ours)) {
        if (ts.isPropertySignature(declaration) && declaration.questionToken && declaration.type && !acceptsUndefined(declaration.type)) {
          problems.add(`${path}.${property.name} (${declaration.getSourceFile().fileName.split(`/node_modules/${packageName}/`)[1]}: ${declaration.getText()})`);
        }
      }
      visit(checker.getTypeOfSymbol(property), `${path}.${property.name}`, depth + 1);
    }
  };
  const visitParameters = (signature: ts.Signature, path: string) => {
    for (const parameter of signature.getParameters()) visit(checker.getTypeOfSymbol(parameter), `${path}(${parameter.name})`, 0);
  };

  const imports = program.getSourceFile(file)!.statements.filter(ts.isImportDeclaration);
  imports.forEach((declaration, i) => {
    const moduleSymbol = checker.getSymbolAtLocation(declaration.moduleSpecifier);
    if (!moduleSymbol) {
      problems.add(`${entries[i]}: the entry's types do not resolve`);
      return;
    }
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!(symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class | ts.SymbolFlags.Variable))) continue;
      const type = checker.getTypeOfSymbolAtLocation(symbol, declaration);
      for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
        const name = `${entries[i]} ${exported.name}`;
        visitParameters(signature, name);
        const returned = checker.getAwaitedType(signature.getReturnType()) ?? signature.getReturnType();
        for (const method of returned.flags & ts.TypeFlags.Object ? checker.getPropertiesOfType(returned) : []) {
          for (const methodSignature of checker.getTypeOfSymbol(method).getCallSignatures()) visitParameters(methodSignature, `${name}→${method.name}`);
        }
      }
    }
  });
  return [...problems].sort();
}
