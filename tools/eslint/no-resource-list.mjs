import { readManifest } from '../manifest/read-manifest.mjs';

/**
 * `platform/no-resource-list`: a list or table naming two or more of the platform's resources (by
 * plural, kind, service name or id prefix) outside the manifest is a second source of truth, and the
 * next resource will be missing from it. Derive it from RESOURCE_MANIFEST (or RESOURCES, SERVICES,
 * ID_PREFIXES, DOMAIN_EVENT_TYPES, which are derived) instead.
 */
export function noResourceListRule(resources = readManifest()) {
  const owner = new Map();
  for (const r of resources) {
    for (const name of [r.resource, r.kind, `${r.kind}-service`, r.idPrefix, `scope:${r.resource}`]) owner.set(name, r.resource);
  }
  const nameOf = (node) => {
    if (!node) return undefined;
    if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
    if (node.type === 'Identifier') return node.name;
    if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0].value.cooked;
    return undefined;
  };
  const check = (context, node, names) => {
    const named = new Set(names.map((n) => owner.get(n)).filter(Boolean));
    if (named.size >= 2) {
      context.report({ node, messageId: 'list', data: { names: [...named].join(', ') } });
    }
  };
  return {
    meta: {
      type: 'problem',
      docs: { description: 'resources are listed once, in the platform manifest (libs/contracts/src/manifest.ts)' },
      messages: { list: 'This lists resources ({{names}}) a second time: derive it from RESOURCE_MANIFEST (@invoicing/contracts).' },
      schema: [],
    },
    create(context) {
      return {
        ArrayExpression(node) {
          check(context, node, node.elements.map((e) => nameOf(e)));
        },
        ObjectExpression(node) {
          check(context, node, node.properties.filter((p) => p.type === 'Property' && !p.computed).map((p) => nameOf(p.key)));
        },
        // Types and classes list them too: an interface keyed by resource, a class with a field each.
        TSInterfaceBody(node) {
          check(context, node, node.body.filter((m) => m.type === 'TSPropertySignature' && !m.computed).map((m) => nameOf(m.key)));
        },
        TSTypeLiteral(node) {
          check(context, node, node.members.filter((m) => m.type === 'TSPropertySignature' && !m.computed).map((m) => nameOf(m.key)));
        },
        ClassBody(node) {
          check(context, node, node.body.filter((m) => m.type === 'PropertyDefinition' && !m.computed).map((m) => nameOf(m.key)));
        },
        // A union of literal names: `'invoices' | 'clients'`.
        TSUnionType(node) {
          check(context, node, node.types.map((t) => (t.type === 'TSLiteralType' ? nameOf(t.literal) : undefined)));
        },
        // `case 'invoices': ... case 'clients':` is a table too.
        SwitchStatement(node) {
          check(context, node, node.cases.map((c) => nameOf(c.test)));
        },
      };
    },
  };
}
