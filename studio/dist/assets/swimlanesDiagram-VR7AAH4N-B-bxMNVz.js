import{c as r,s as e}from"./flowDiagram-HODETNUW-B3MPOxsR.js";import{_ as a}from"./mermaid.core-De2tHFz2.js";import"./chunk-5VM5RSS4-Cz1nL8iM.js";import"./chunk-XXDRQBXY-Daqtducb.js";import"./chunk-POPQ4Y6H-yan55W3Y.js";import"./chunk-F27PBJKO-ISRWgDkX.js";import"./vendor-dompurify-BwvVeVQi.js";import"./channel-C9JzNy-L.js";import"./runtime-fW95gcew.js";import"./vendor-marked-Br7JEcKK.js";var o=a(t=>`${e(t)}
  .swimlane.cluster rect {
    stroke: ${t.clusterBorder} !important;
  }
  [data-look="neo"].cluster rect {
    filter: none;
  }
`,"getStyles"),m=o,_=r({defaultLayout:"swimlane",styles:m});export{_ as diagram};
