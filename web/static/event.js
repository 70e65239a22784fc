// An event's page on the dashboard (templates/staff/event.html): its
// counts are fetched again every few seconds and swapped in, as on the
// Today page. Without JavaScript the page still works, it just needs a
// reload.
(function(){
  var live=document.getElementById('event-live');
  if(!live)return;
  function refresh(){fetch(live.dataset.src,{credentials:'same-origin'}).then(function(r){
    if(r.ok&&r.redirected===false){return r.text();}}).then(function(html){if(html){live.innerHTML=html;}}).catch(function(){});}
  setInterval(refresh,2000);
})();
