// SPDX-License-Identifier: GPL-3.0-or-later
//
// Flamenco 3 custom job type "Collide Clash Scan": one Blender task per frame chunk runs
// blender_scripts/clash_report.py and writes a chunk report into a shared folder; a final
// task runs `collide merge` over them into one report, equal to a single run's.
// Install: copy this file into the `scripts` folder beside the Flamenco Manager executable
// and restart the Manager (see the README's "Scale out" section).

const JOB_TYPE = {
    label: "Collide Clash Scan",
    settings: [
        { key: "frames", type: "string", required: true,
          eval: "f'{C.scene.frame_start}-{C.scene.frame_end}'",
          evalInfo: { showLinkButton: true, description: "Scene frame range" },
          description: "Frames to scan: 'START-END' or one frame" },
        { key: "chunk_size", type: "int32", default: 50, propargs: { min: 1 },
          description: "Frames per Blender task", visible: "submission" },
        { key: "scratch", type: "string", subtype: "dir_path", required: true,
          description: "Shared folder for the chunk reports (every worker writes here)",
          visible: "submission" },
        { key: "clash_report_script", type: "string", subtype: "file_path", required: true,
          description: "blender_scripts/clash_report.py as the workers see it",
          visible: "submission" },
        { key: "tests_file", type: "string", subtype: "file_path", required: false,
          description: "Clash tests JSON file (default: the tests stored on the scene)",
          visible: "submission" },
        { key: "baseline", type: "string", subtype: "file_path", required: false,
          description: "Previous JSON report: statuses carry over", visible: "submission" },
        { key: "report_json", type: "string", subtype: "file_path", required: true,
          description: "Merged JSON report to write", visible: "submission" },
        { key: "report_html", type: "string", subtype: "file_path", required: false,
          description: "Merged HTML report to write", visible: "submission" },
        { key: "collide_exe", type: "string", default: "collide",
          description: "The collide command on the worker that merges", visible: "submission" },
        { key: "blendfile", type: "string", required: true,
          description: "Path of the Blend file to scan", visible: "web" },
    ],
};

// "START-END" or "FRAME" -> [start, end]; anything else (lists, steps) is refused, as the
// merge needs consecutive chunks of one range.
function parseFrameRange(text) {
    const match = /^\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?$/.exec(String(text));
    if (!match) {
        throw `frames must be START-END or one frame, got "${text}"`;
    }
    const start = parseInt(match[1], 10);
    const end = match[2] === undefined ? start : parseInt(match[2], 10);
    if (end < start) {
        throw `frames must have START <= END, got "${text}"`;
    }
    return [start, end];
}

// Consecutive [first, last] chunks of at most `size` frames covering start..end.
function frameChunks(start, end, size) {
    if (!(size >= 1)) {
        throw `chunk_size must be >= 1, got ${size}`;
    }
    const chunks = [];
    for (let first = start; first <= end; first += size) {
        chunks.push([first, Math.min(first + size - 1, end)]);
    }
    return chunks;
}

function chunkTask(settings, first, last, part, isLastChunk) {
    const args = ["--python", settings.clash_report_script, "--",
                  // One argument: a range starting below frame 0 would read as an option.
                  `--frames=${first}-${last}`, "--json", part, "--fail-on", "never"];
    if (!isLastChunk) {
        // What lies between this chunk's last frame and the next chunk's first (the
        // scene's continuous tests) is scanned here, as in one run; the merge needs it.
        args.push("--lookahead");
    } else {
        // A set matching nothing at the last chunk's frames (objects demolished before
        // them) is listed for the merge to decide on, as the other chunks list theirs.
        args.push("--chunk");
    }
    if (settings.tests_file) {
        args.push("--tests", settings.tests_file);
    }
    if (settings.baseline) {
        // Every chunk lists the objects of clashes resolved since the baseline.
        args.push("--baseline", settings.baseline);
    }
    const task = author.Task(`collide-${first}-${last}`, "blender");
    task.addCommand(author.Command("blender-render", {
        exe: "{blender}",
        exeArgs: "{blenderArgs}",
        argsBefore: ["--factory-startup"],
        blendfile: settings.blendfile,
        args: args,
    }));
    return task;
}

function mergeTask(settings, parts) {
    const args = ["merge", ...parts, "--json", settings.report_json, "--fail-on", "never"];
    if (settings.report_html) {
        args.push("--html", settings.report_html);
    }
    if (settings.baseline) {
        args.push("--baseline", settings.baseline);
    }
    const task = author.Task("collide-merge", "misc");
    task.addCommand(author.Command("exec", { exe: settings.collide_exe || "collide", args: args }));
    return task;
}

function compileJob(job) {
    const settings = job.settings;
    const [start, end] = parseFrameRange(settings.frames);
    const chunkTasks = [];
    const parts = [];
    for (const [first, last] of frameChunks(start, end, settings.chunk_size)) {
        const part = path.join(settings.scratch, `part-${first}-${last}.json`);
        parts.push(part);
        const task = chunkTask(settings, first, last, part, last === end);
        chunkTasks.push(task);
        job.addTask(task);
    }
    const merge = mergeTask(settings, parts);
    for (const task of chunkTasks) {
        merge.addDependency(task);
    }
    job.addTask(merge);
}
