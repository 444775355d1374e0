// A typedoc plugin: in the guides (and comments), a relative link to a source file under src/
// becomes a link to the API reference page of what that file declares. So a guide can say
// [`Mutex`](../../src/mutex/mutex.ts) and the link works on GitHub and npm (the source, with
// its TSDoc) and in the generated reference (the class's page).
//
//   ../../src/mutex/mutex.ts           the file's first exported class (else function, ...)
//   ../../src/errors.ts#LockLostError  the declaration of that name in the file
//
// test/docs.test.ts checks that every such anchor names an export of its file.
import { Converter, ReflectionKind } from 'typedoc';

const PREFERENCE = [ReflectionKind.Class, ReflectionKind.Function, ReflectionKind.Interface, ReflectionKind.TypeAlias, ReflectionKind.Variable];

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    const project = context.project;
    const files = project.files;
    // Source file -> its documented declarations, in source order.
    const byFile = new Map();
    for (const refl of Object.values(project.reflections)) {
      if (!refl.kindOf(PREFERENCE)) continue;
      const id = project.getSymbolIdFromReflection(refl);
      if (!id?.fileName || !/\/src\/.*\.ts$/.test(id.fileName)) continue;
      const list = byFile.get(id.fileName) ?? [];
      list.push({ refl, name: id.qualifiedName, pos: id.pos });
      byFile.set(id.fileName, list);
    }
    for (const list of byFile.values()) list.sort((a, b) => a.pos - b.pos);

    const target = (path, anchor) => {
      const list = byFile.get(path);
      if (!list) return undefined;
      if (anchor) return list.find((d) => d.name === anchor)?.refl;
      for (const kind of PREFERENCE) {
        const found = list.find((d) => d.refl.kindOf(kind));
        if (found) return found.refl;
      }
      return undefined;
    };

    const retarget = (parts) => {
      for (const part of parts ?? []) {
        if (part.kind !== 'relative-link' || typeof part.target !== 'number') continue;
        const path = files.resolvePath(part.target);
        if (typeof path !== 'string' || !/\/src\/.*\.ts$/.test(path)) continue;
        const refl = target(path, part.targetAnchor);
        if (!refl) {
          app.logger.warn(`${part.text}: no documented declaration ${part.targetAnchor ?? ''} in ${path}`);
          continue;
        }
        // One synthetic path per declaration, mapped to its page (a real path maps to one page).
        const synthetic = `${path}::${refl.name}`;
        files.registerReflectionPath(synthetic, refl);
        part.target = files.registerAbsolute(synthetic).target;
        part.targetAnchor = undefined;
      }
    };

    if (project.readme) retarget(project.readme);
    for (const refl of Object.values(project.reflections)) {
      if (refl.isDocument?.()) retarget(refl.content);
      const comments = [refl.comment, ...(refl.signatures ?? []).map((s) => s.comment)];
      for (const c of comments) {
        if (!c) continue;
        retarget(c.summary);
        for (const tag of c.blockTags) retarget(tag.content);
      }
    }
  });
}
