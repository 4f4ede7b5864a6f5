import{d as h,A as I,h as O,u as e,S as z}from"./vendor-preact-COmIdZ9S.js";import{s as se,E as T,a as ie,b as re,C as oe,y as ae,m as le,l as ce}from"./vendor-codemirror-BHurMpAu.js";import{u as de,m as ue,c as he,g as pe,d as G,a as N,p as H,A as j,b as x,R as me,E as D,L as fe,S as C,T as ve,J as K,e as we,n as ge}from"./index-Dm26t5Xv.js";import"./runtime-fW95gcew.js";import"./vendor-marked-Br7JEcKK.js";import"./vendor-dompurify-BwvVeVQi.js";import"./vendor-diff-SELG1YgQ.js";const M={workflow:`document:
  dsl: '1.0.3'
  namespace: my-playbook
  name: my-workflow
  version: '1.0.0'
  summary: What this workflow does
input:
  schema:
    document:
      type: object
      properties:
        month: { type: string }
do:
  - pause:
      wait: PT1S
`,reasoning:`---
description: What this function decides
model: anthropic/claude-sonnet-4-5
input:
  schema:
    type: object
    required: [text]
    properties:
      text: { type: string }
---
Summarise this text in one sentence:

{{ input.text }}
`,interaction:`---
description: Asks a person to approve something
to: '{{ input.owner }}'
expires: P2D
input:
  schema:
    type: object
    required: [owner]
    properties:
      owner: { type: string }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
Please approve, or ask for a revision.
`,computation:`---
description: What this computes
input:
  schema:
    type: object
    required: [n]
    properties:
      n: { type: integer }
output:
  schema:
    type: object
    required: [double]
    properties:
      double: { type: integer }
---
Doubles a number.

\`\`\`ts
export default function (input: { n: number }) {
  return { double: input.n * 2 };
}
\`\`\`
`,recall:`---
description: Counts events by type
events: [com.example.thing.happened]
output:
  shape: categories
---
\`\`\`ts
export const initial = {};
export function fold(view: Record<string, number>, event: { type: string }) {
  return { ...view, [event.type]: (view[event.type] || 0) + 1 };
}
export function answer(view: Record<string, number>) {
  return { categories: Object.entries(view).map(([name, value]) => ({ name, value })) };
}
\`\`\`
`,prediction:`---
description: Forecasts a monthly series
source:
  recall: orders-by-month
horizon: 12
period: P1M
---
Forecasts the next year of orders.
`};function U(s){return`${s.line??""}:${s.column??""}:${s.message}`}function Ce({org:s,pb:o,type:c,name:p}){const y=de(ue),a=!!(c&&p),[i,E]=h(c||"workflow"),[d,Y]=h(p||""),[k,R]=h("none"),[f,_]=h(""),[m,A]=h(a?null:M[c||"workflow"]),[q,P]=h(null),[W,Q]=h(null),[u,$]=h({state:"idle"}),[v,B]=h(null),[V,J]=h(!1),b=I(null),S=he(y,"edit");O(()=>{!a||!S||pe(G(s,o,c,p)).then(t=>{Q(t),A(t.source),R(t.diagram||"none"),_(t.type==="workflow"?"":t.overview||"")},P)},[s,o,c,p,S]),O(()=>{if(m===null||!S)return;const t=new AbortController,n=setTimeout(async()=>{$(r=>({...r,state:"checking"}));try{const r={type:i,name:d||"untitled",source:m,diagram:k||"none"};i!=="workflow"&&f.trim()&&(r.overview=f);const w=await N("POST",`${H(s,o)}/definitions/check`,r,t.signal);$({state:"done",result:w})}catch(r){if(r.name==="AbortError")return;r instanceof j&&r.status===422?$({state:"done",result:{valid:!1,issues:r.problem.issues||[],warnings:[],input_schema:null,output_schema:null}}):$({state:"error",error:r})}},400);return()=>{clearTimeout(n),t.abort()}},[m,i,d,k,f,S]);const X=u.result?.issues||[],Z=v instanceof j?v.problem.issues||[]:[],g=[...X];for(const t of Z)g.some(n=>U(n)===U(t))||g.push(t);O(()=>{const t=b.current;if(!t)return;const n=t.state.doc,r=[];for(const w of g){if(!w.line||w.pointer&&w.pointer!=="/source")continue;const ne=Math.min(Math.max(1,w.line),n.lines),L=n.line(ne),F=Math.min(L.to,L.from+Math.max(0,(w.column||1)-1));r.push({from:F,to:Math.max(F,L.to),severity:"error",message:w.message})}t.dispatch(se(t.state,r))},[JSON.stringify(g),b.current]);const ee=async()=>{if(m!==null){J(!0),B(null);try{let t;if(a){const n={source:m,diagram:k||"none"};i!=="workflow"&&(n.overview=f.trim()?f:null),t=await N("PUT",G(s,o,i,d),n)}else{const n={type:i,name:d,source:m,diagram:k||"none"};i!=="workflow"&&f.trim()&&(n.overview=f),t=await N("POST",`${H(s,o)}/definitions`,n)}ge(x(s,o,"definitions",t.type,t.name))}catch(t){B(t)}finally{J(!1)}}},te=t=>{const n=b.current;if(!n)return;const r=n.state.doc.line(Math.min(Math.max(1,t),n.state.doc.lines));n.dispatch({selection:{anchor:r.from},scrollIntoView:!0}),n.focus()};if(!S)return e(me,{title:a?`Edit ${c} ${p}`:"New definition",role:y?.role,what:"edit definitions",needs:"editor or admin",back:a?x(s,o,"definitions",c,p):x(s,o,"definitions"),backLabel:a?`Back to ${c} ${p}`:"Back to the definitions"});if(q)return e(D,{error:q});if(m===null)return e(fe,{});const l=u.result;return e("div",{class:"page editor-page",children:[e("header",{class:"page-head",children:[e("div",{children:[e("p",{class:"crumbs",children:[e("a",{href:x(s,o,"definitions"),children:"Definitions"}),a&&e(z,{children:[" / ",e("a",{href:x(s,o,"definitions",i,d),children:d})]})]}),e("h1",{children:a?`Edit ${i} ${d}`:"New definition"}),W&&e("p",{class:"meta muted",children:["Saving makes version ",W.version+1,"; an unchanged document makes none."]})]}),e("div",{class:"actions",children:[e("span",{class:"check-state",role:"status","aria-live":"polite","data-check":u.state==="done"?l?.valid?"valid":"invalid":u.state,children:[u.state==="checking"&&e(C,{status:"running",label:"Checking…"}),u.state==="done"&&(l?.valid?e(C,{status:"valid",label:"Valid"}):e(C,{status:"invalid",label:`${l?.issues.length||0} issue${l?.issues.length===1?"":"s"}`})),u.state==="error"&&e(C,{status:"unavailable",label:"Not checked"})]}),e("button",{type:"button",class:"primary",onClick:ee,disabled:V,children:V?"Saving…":a?"Save a new version":"Create"})]})]}),!a&&e("div",{class:"filters",children:[e("div",{class:"field",children:[e("label",{for:"ed-type",children:"Type"}),e("select",{id:"ed-type",value:i,onChange:t=>{const n=t.target.value;m===M[i]&&(A(M[n]),b.current?.dispatch({changes:{from:0,to:b.current.state.doc.length,insert:M[n]}})),E(n)},children:ve.map(t=>e("option",{value:t,children:t},t))})]}),e("div",{class:"field",children:[e("label",{for:"ed-name",children:"Name"}),e("input",{id:"ed-name",value:d,placeholder:"review-brief",onInput:t=>Y(t.target.value)})]})]}),v?e(D,{error:v}):null,u.state==="error"&&e(D,{error:u.error}),e("div",{class:"editor-grid",children:[e("div",{children:[e(be,{doc:m,type:i,onChange:A,onView:t=>{b.current=t}},i),e("div",{class:"field",children:[e("label",{for:"ed-diagram",children:"Diagram (Mermaid: flowchart, graph or stateDiagram; or the word none)"}),e("textarea",{id:"ed-diagram",class:"mono",rows:4,value:k,onInput:t=>R(t.target.value)})]}),i!=="workflow"?e("div",{class:"field",children:[e("label",{for:"ed-overview",children:"Overview (Markdown, optional)"}),e("textarea",{id:"ed-overview",rows:5,value:f,onInput:t=>_(t.target.value)})]}):e("p",{class:"muted small",children:"A workflow's overview is written by the runtime from its document."})]}),e("aside",{class:"card side","aria-labelledby":"issues-h",children:[e("h2",{id:"issues-h",children:"Check"}),g.length===0&&u.state==="done"&&e("p",{children:"No issues."}),g.length>0&&e("ul",{class:"issue-list",children:g.map((t,n)=>e("li",{"data-line":t.line??"",children:[t.line?e("button",{type:"button",class:"link",onClick:()=>te(t.line),children:["Line ",t.line,t.column?`:${t.column}`:""]}):e("span",{class:"tag",children:t.pointer||"document"}),e("span",{children:[" ",t.line?t.message.replace(/^Line \d+(, column \d+)?[,:]\s*/,""):t.message]})]},n))}),l&&l.warnings&&l.warnings.length>0&&e(z,{children:[e("h3",{children:"Warnings"}),e("ul",{class:"issue-list",children:l.warnings.map((t,n)=>e("li",{children:typeof t=="string"?t:t.message},n))})]}),l?.input_schema?e("details",{children:[e("summary",{children:"Input schema"}),e(K,{value:l.input_schema,label:"Input schema"})]}):null,l?.output_schema?e("details",{children:[e("summary",{children:"Output schema"}),e(K,{value:l.output_schema,label:"Output schema"})]}):null,v&&!(v instanceof j&&v.status===422)?e("p",{class:"muted",children:we(v).detail}):null]})]})]})}function be({doc:s,type:o,onChange:c,onView:p}){const y=I(null),a=I(c);return a.current=c,O(()=>{const i=new oe,E=new T({parent:y.current,state:ie.create({doc:s,extensions:[re,i.of(o==="workflow"?ae():le()),ce(),T.lineWrapping,T.contentAttributes.of({"aria-label":`The document of the ${o} function`}),T.updateListener.of(d=>{d.docChanged&&a.current(d.state.doc.toString())})]})});return p(E),()=>E.destroy()},[]),e("div",{ref:y,class:"code-editor","data-language":o==="workflow"?"yaml":"markdown"})}export{Ce as EditorPage};
