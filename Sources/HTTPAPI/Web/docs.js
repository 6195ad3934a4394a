// The API docs page: the operations of /openapi.json, their parameters and answers, rendered with textContent.
"use strict";
(async function () {
  const $ = (id) => document.getElementById(id);
  const element = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  let documentJSON;
  try {
    const response = await fetch("/openapi.json");
    documentJSON = await response.json();
  } catch (error) {
    $("operations").replaceChildren(element("p", "error", `cannot load /openapi.json: ${error.message}`));
    return;
  }
  const resolve = (object) => {
    let current = object;
    while (current && current.$ref) {
      current = current.$ref.replace(/^#\//, "").split("/").reduce((node, key) => (node ? node[key] : undefined), documentJSON);
    }
    return current || {};
  };
  const describeSchema = (schema) => {
    schema = resolve(schema);
    const parts = [];
    const type = Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type;
    if (type) parts.push(type);
    if (schema.enum) parts.push(`one of ${schema.enum.join(", ")}`);
    if (schema.exclusiveMinimum !== undefined) parts.push(`over ${schema.exclusiveMinimum}`);
    if (schema.minimum !== undefined && schema.maximum !== undefined) parts.push(`${schema.minimum} to ${schema.maximum}`);
    else if (schema.minimum !== undefined) parts.push(`at least ${schema.minimum}`);
    else if (schema.maximum !== undefined) parts.push(`at most ${schema.maximum}`);
    if (schema.minLength !== undefined || schema.maxLength !== undefined) parts.push(`length ${schema.minLength ?? 0}–${schema.maxLength ?? "…"}`);
    if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
    return parts.join(", ");
  };
  $("title").textContent = `${documentJSON.info.title} ${documentJSON.info.version}`;
  $("description").textContent = documentJSON.info.description || "";
  const list = $("operations");
  list.replaceChildren();
  for (const [path, operations] of Object.entries(documentJSON.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (typeof operation !== "object" || !operation.responses) continue;
      const box = element("section", "operation");
      box.id = operation.operationId || `${method}-${path}`;
      const heading = element("h3");
      heading.appendChild(element("span", `method ${method}`, method.toUpperCase()));
      heading.appendChild(document.createTextNode(path));
      box.appendChild(heading);
      if (operation.summary) box.appendChild(element("div", "", operation.summary));
      if (operation.description) box.appendChild(element("p", "muted", operation.description));
      const parameters = (operation.parameters || []).map(resolve);
      if (parameters.length > 0) {
        const table = element("table");
        const head = element("tr");
        for (const title of ["parameter", "in", "rule", "description"]) head.appendChild(element("th", "", title));
        table.appendChild(head);
        for (const parameter of parameters) {
          const row = element("tr");
          const name = element("td");
          name.appendChild(element("code", "", parameter.name));
          if (parameter.required) name.appendChild(element("span", "muted", " required"));
          row.appendChild(name);
          row.appendChild(element("td", "muted", parameter.in));
          row.appendChild(element("td", "", describeSchema(parameter.schema || {})));
          row.appendChild(element("td", "muted", parameter.description || resolve(parameter.schema || {}).description || ""));
          table.appendChild(row);
        }
        box.appendChild(table);
      }
      if (operation.requestBody) {
        const content = resolve(operation.requestBody).content || {};
        box.appendChild(element("div", "muted", `body: ${Object.keys(content).join(", ")}`));
      }
      const answers = Object.entries(operation.responses).map(([code, answer]) => `${code} ${resolve(answer).description || ""}`.trim());
      box.appendChild(element("div", "muted", `answers: ${answers.join(" · ")}`));
      list.appendChild(box);
    }
  }
  document.body.setAttribute("data-ready", "true");
})();
