import{a5 as o,a6 as n}from"./mermaid.core-De2tHFz2.js";const t=(a,r)=>o.lang.round(n.parse(a)[r]);export{t as c};
