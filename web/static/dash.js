// The Today page's live refresh (templates/staff/dash.html): the counts,
// offers and slots are fetched again every few seconds and swapped in;
// countdowns tick in between. Without JavaScript the page still works,
// it just needs a reload.
(function(){
  var live=document.getElementById('live');
  if(!live)return;
  function tick(){document.querySelectorAll('.countdown').forEach(function(el){
    var s=Math.max(0,(parseInt(el.dataset.seconds,10)||0)-1);el.dataset.seconds=s;
    el.textContent=Math.floor(s/60)+' min '+(s%60)+' s';});}
  function refresh(){fetch('/dash/live',{credentials:'same-origin'}).then(function(r){
    if(r.ok&&r.redirected===false){return r.text();}}).then(function(html){if(html){live.innerHTML=html;}}).catch(function(){});}
  setInterval(tick,1000);setInterval(refresh,2000);tick();
})();
