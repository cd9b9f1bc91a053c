/// `GET /`: a page that plays the stream and shows how far behind the capture clock the picture is.
/// Served below `/NAME/` by a server for many streams, it links back to their index.
///
/// Self-contained (nothing is fetched from elsewhere): Safari plays the playlist natively; other
/// browsers get a small Media Source player that follows the master playlist's first variant and its
/// audio rendition. The delay is the wall clock minus the EXT-X-PROGRAM-DATE-TIME of the frame shown.
/// With a recordings folder, a timeline below the video: a thumbnail a minute of each recording
/// (`/recordings/index.json`, `/recordings/thumbnails.json`, `/recordings/thumbnail.jpg?at=…`, loaded
/// lazily); a click plays the
/// recordings from that moment (`/recordings/playlist.m3u8?start=…&duration=…`, byte ranges).
enum PreviewPage {
    static let html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>hlscap preview</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>
        body { font: 15px system-ui, sans-serif; margin: 1em; background: #111; color: #eee; }
        video { width: 100%; max-width: 960px; background: #000; display: block; }
        #status { margin-top: .6em; font-variant-numeric: tabular-nums; }
        #timeline { display: flex; flex-wrap: wrap; gap: .5em; margin-top: 1em; }
        #timeline figure { margin: 0; cursor: pointer; }
        #timeline img { width: 160px; display: block; background: #222; }
        #timeline figcaption { font-size: 12px; color: #aaa; }
        #index { display: inline-block; margin-bottom: .6em; color: #8cf; }
        </style></head>
        <body>
        <a id="index" href="../" hidden>all cameras</a>
        <video id="video" muted autoplay playsinline controls></video>
        <div id="status">starting…</div>
        <div id="timeline" hidden></div>
        <script>
        "use strict";
        const video = document.getElementById("video");
        const status = document.getElementById("status");
        const query = new URLSearchParams(location.search);
        // Program date-times of what was appended: media time at which each segment starts, and its date.
        const timeline = [];
        window.hlscapPreview = { latencySeconds: null, error: null, appended: 0, thumbnails: [], recording: null,
                                  shownDate: null, playing: null };
        // Which playback is current: a click on the timeline starts another, and the one before stops.
        let session = 0;

        function attributes(line) {
          const found = {};
          const pattern = /([A-Z0-9-]+)=("[^"]*"|[^,]*)/g;
          let match;
          while ((match = pattern.exec(line))) found[match[1]] = match[2].replace(/^"|"$/g, "");
          return found;
        }
        // The credentials the page was opened with (a token, or a signed URL's fields) go with the
        // first playlist; the server carries them into every URI of the playlists it serves.
        function withCredentials(url) {
          const carried = new URL(url);
          for (const name of ["token", "prefix", "expires", "signature"])
            if (query.has(name) && !carried.searchParams.has(name)) carried.searchParams.set(name, query.get(name));
          return carried.href;
        }
        async function get(url, kind, range) {
          const headers = range ? { Range: "bytes=" + range.offset + "-" + (range.offset + range.length - 1) } : {};
          const response = await fetch(url, { cache: "no-cache", headers });
          if (!response.ok) throw new Error(url + " answered " + response.status);
          return kind === "text" ? response.text() : response.arrayBuffer();
        }
        function parseMedia(body, base) {
          const playlist = { segments: [], target: 2, ended: false };
          let sequence = 0, map = null, date = null, duration = 0, range = null;
          // "length@offset", the form EXT-X-BYTERANGE and a map's BYTERANGE take.
          const byteRange = text => {
            const [length, offset] = text.split("@").map(Number);
            return { offset: offset || 0, length };
          };
          for (const line of body.split("\\n")) {
            if (line.startsWith("#EXT-X-TARGETDURATION:")) playlist.target = Number(line.slice(22));
            else if (line.startsWith("#EXT-X-MEDIA-SEQUENCE:")) sequence = Number(line.slice(22));
            else if (line.startsWith("#EXT-X-MAP:")) {
              const found = attributes(line);
              map = { uri: new URL(found.URI, base).href, range: found.BYTERANGE ? byteRange(found.BYTERANGE) : null };
              map.key = map.uri + (map.range ? "@" + map.range.offset : "");
            }
            else if (line.startsWith("#EXT-X-PROGRAM-DATE-TIME:")) date = Date.parse(line.slice(25));
            else if (line.startsWith("#EXT-X-BYTERANGE:")) range = byteRange(line.slice(17));
            else if (line.startsWith("#EXTINF:")) duration = parseFloat(line.slice(8));
            else if (line === "#EXT-X-ENDLIST") playlist.ended = true;
            else if (line && !line.startsWith("#")) {
              playlist.segments.push({ uri: new URL(line, base).href, map, date, duration, range,
                                       sequence: sequence + playlist.segments.length });
              date = null;
              range = null;
            }
          }
          return playlist;
        }
        async function variant() {
          const masterURL = withCredentials(new URL(query.get("src") || "master.m3u8", location.href).href);
          let body;
          try { body = await get(masterURL, "text"); } catch (error) {
            const single = withCredentials(new URL("playlist.m3u8", location.href).href);
            return [{ url: single, codecs: null, primary: true }];
          }
          const lines = body.split("\\n");
          const audio = {};
          let chosen = null;
          for (let index = 0; index < lines.length; index++) {
            const line = lines[index];
            if (line.startsWith("#EXT-X-MEDIA:")) {
              const media = attributes(line);
              if (media.TYPE === "AUDIO" && media.URI && (media.DEFAULT === "YES" || !audio[media["GROUP-ID"]]))
                audio[media["GROUP-ID"]] = new URL(media.URI, masterURL).href;
            } else if (line.startsWith("#EXT-X-STREAM-INF:") && !chosen) {
              chosen = { info: attributes(line), url: new URL(lines[index + 1].trim(), masterURL).href };
            }
          }
          if (!chosen) return [{ url: masterURL, codecs: null, primary: true }];
          const codecs = (chosen.info.CODECS || "").split(",");
          const audioURL = chosen.info.AUDIO && audio[chosen.info.AUDIO];
          if (!audioURL) return [{ url: chosen.url, codecs: codecs.join(","), primary: true }];
          return [
            { url: chosen.url, codecs: codecs.filter(c => !c.startsWith("mp4a")).join(","), primary: true },
            { url: audioURL, codecs: codecs.filter(c => c.startsWith("mp4a")).join(","), primary: false, audio: true },
          ];
        }
        function append(buffer, bytes) {
          return new Promise((resolve, reject) => {
            buffer.addEventListener("updateend", resolve, { once: true });
            buffer.addEventListener("error", () => reject(new Error("the browser refused a segment")), { once: true });
            buffer.appendBuffer(bytes);
          });
        }
        async function follow(source, lane, current) {
          const type = (lane.audio ? "audio/mp4" : "video/mp4") + (lane.codecs ? "; codecs=\\"" + lane.codecs + "\\"" : "");
          const buffer = source.addSourceBuffer(type);
          // A recording's files each start their own timeline: appended one after the other.
          if (lane.sequential) buffer.mode = "sequence";
          let next = null, map = null;
          for (;;) {
            if (current !== session) return;
            const playlist = parseMedia(await get(lane.url, "text"), lane.url);
            if (next === null) {
              const start = playlist.ended ? 0 : Math.max(0, playlist.segments.length - 3);
              next = playlist.segments.length ? playlist.segments[start].sequence : 0;
            }
            for (const segment of playlist.segments.filter(s => s.sequence >= next)) {
              if (current !== session) return;
              if (segment.map && segment.map.key !== map) {
                await append(buffer, await get(segment.map.uri, "bytes", segment.map.range));
                map = segment.map.key;
              }
              const start = buffer.buffered.length ? buffer.buffered.end(buffer.buffered.length - 1) : null;
              await append(buffer, await get(segment.uri, "bytes", segment.range));
              if (lane.primary && segment.date) {
                const begin = start === null ? buffer.buffered.start(0) : start;
                timeline.push({ begin, date: segment.date });
              }
              next = segment.sequence + 1;
              window.hlscapPreview.appended += 1;
              // Media times start where the stream's timeline does (10 s for hlscap): go there.
              if (lane.primary && buffer.buffered.length && video.currentTime < buffer.buffered.start(0))
                video.currentTime = buffer.buffered.start(0);
            }
            if (playlist.ended) return;
            await new Promise(resolve => setTimeout(resolve, playlist.target * 500));
          }
        }
        function showDelay() {
          const entry = timeline.filter(item => item.begin <= video.currentTime).pop();
          if (entry) {
            const shown = entry.date + (video.currentTime - entry.begin) * 1000;
            window.hlscapPreview.shownDate = shown;
            if (window.hlscapPreview.recording) {
              status.textContent = "playing the recording of " + new Date(shown).toISOString();
            } else {
              const latency = (Date.now() - shown) / 1000;
              window.hlscapPreview.latencySeconds = latency;
              status.textContent = "playing " + video.currentTime.toFixed(1) + " s, " + latency.toFixed(2)
                + " s behind the capture clock";
            }
          }
          requestAnimationFrame(showDelay);
        }
        function failed(error) {
          window.hlscapPreview.error = String(error);
          status.textContent = "cannot play: " + error;
        }
        // Plays `lanes` in place of whatever played before.
        async function play(lanes) {
          const current = ++session;
          timeline.length = 0;
          window.hlscapPreview.playing = lanes[0].url;
          if (video.canPlayType("application/vnd.apple.mpegurl") && !window.MediaSource) {
            video.src = lanes[0].url;
            status.textContent = "playing natively";
            return;
          }
          const source = new MediaSource();
          video.src = URL.createObjectURL(source);
          await new Promise(resolve => source.addEventListener("sourceopen", resolve, { once: true }));
          try {
            await Promise.all(lanes.map(lane => follow(source, lane, current)));
          } catch (error) {
            // A playback that was replaced fails as its buffers go: only the current one reports.
            if (current === session) throw error;
            return;
          }
          if (current === session) source.endOfStream();
        }

        function recordingURL(path, query) {
          const url = new URL("recordings/" + path, location.href);
          for (const [name, value] of Object.entries(query || {})) url.searchParams.set(name, value);
          return withCredentials(url.href);
        }
        // The recordings' timeline: a thumbnail at the start of each file and at every whole minute in it,
        // one a second (the server lists the moments).
        async function showRecordings() {
          let index, moments;
          try {
            index = JSON.parse(await get(recordingURL("index.json"), "text"));
            moments = JSON.parse(await get(recordingURL("thumbnails.json"), "text")).thumbnails;
          } catch (error) { return; }
          const files = new Map(index.files.filter(file => file.start && file.end).map(file => [file.path, file]));
          if (!files.size) return;
          const box = document.getElementById("timeline");
          const last = Math.max(...[...files.values()].map(file => Date.parse(file.end)));
          for (const moment of moments) {
            const file = files.get(moment.path);
            if (!file) continue;
            const at = moment.at, time = Date.parse(at);
            const figure = document.createElement("figure");
            const image = document.createElement("img");
            image.loading = "lazy";
            image.alt = at;
            image.src = recordingURL("thumbnail.jpg", { at });
            const caption = document.createElement("figcaption");
            caption.textContent = at.slice(11, 19);
            figure.append(image, caption);
            figure.addEventListener("click", () => {
              const duration = Math.max(1, (last - time) / 1000).toFixed(3);
              const url = recordingURL("playlist.m3u8", { start: at, duration });
              window.hlscapPreview.recording = { url, at };
              window.hlscapPreview.error = null;
              play([{ url, codecs: file.codecs.join(","), primary: true, sequential: true }]).catch(failed);
            });
            box.append(figure);
            window.hlscapPreview.thumbnails.push({ at, url: image.src });
          }
          box.hidden = false;
        }
        // Below /NAME/ of a server for many streams, a way back to its index.
        if (location.pathname !== "/" && location.pathname !== "/index.html") {
          const index = document.getElementById("index");
          index.href = withCredentials(new URL("../", location.href).href);
          index.hidden = false;
        }
        requestAnimationFrame(showDelay);
        showRecordings();
        variant().then(play).catch(failed);
        </script>
        </body></html>
        """
}
