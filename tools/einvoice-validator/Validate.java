import java.io.File;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.mustangproject.validator.ZUGFeRDValidator;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * Validates every *.xml file of a directory with the Mustang project's ZUGFeRDValidator (XSD and
 * EN 16931 schematron, CII and UBL) in one JVM, and prints one line per file:
 *
 *   valid    cii-one-line.xml  errors=0 warnings=0 notices=4  612 ms
 *   invalid  broken.xml        errors=3 warnings=0 notices=0  88 ms
 *     error [BR-CO-15] ... (location)
 *
 * then "einvoice-validator: N files, N valid, N invalid in N ms". With `--json FILE` it also writes
 * every file's verdict and messages as JSON; `--notices` adds the XRechnung notices (slower). Exit status: 0 when every file is valid, 1 otherwise,
 * 2 on a usage error. Run through validate.sh, which resolves the classpath.
 */
public class Validate {
    private static final List<String> FAILING = Arrays.asList("error", "fatal", "exception");
    private static final Pattern RULE_ID = Pattern.compile("\\[ID ([^\\]]+)\\]");

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(Arrays.asList(args));
        boolean notices = rest.remove("--notices");
        String jsonFile = null;
        int json_ = rest.indexOf("--json");
        if (json_ >= 0 && json_ + 1 < rest.size()) {
            jsonFile = rest.get(json_ + 1);
            rest.subList(json_, json_ + 2).clear();
        }
        if (rest.size() != 1) {
            System.err.println("usage: validate.sh DIR [--json FILE] [--notices]");
            System.exit(2);
        }
        File dir = new File(rest.get(0));
        File[] files = dir.listFiles((d, name) -> name.endsWith(".xml"));
        if (files == null) {
            System.err.println("einvoice-validator: not a directory: " + dir);
            System.exit(2);
        }
        Arrays.sort(files);
        long started = System.nanoTime();
        int invalid = 0;
        StringBuilder json = new StringBuilder("[");
        for (File file : files) {
            long t0 = System.nanoTime();
            ZUGFeRDValidator validator = new ZUGFeRDValidator();
            // Notices are the XRechnung CIUS's remarks on an EN 16931 invoice: a second schematron
            // pass (half the time of a large file) about a profile we do not claim.
            if (!notices) validator.disableNotices();
            String report = validator.validate(file.getAbsolutePath());
            boolean valid = validator.wasCompletelyValid();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            List<String[]> messages = messages(report);
            int errors = 0, warnings = 0, noticeCount = 0;
            for (String[] m : messages) {
                if (FAILING.contains(m[0])) errors++;
                else if (m[0].equals("warning")) warnings++;
                else noticeCount++;
            }
            if (!valid) invalid++;
            System.out.printf("%-8s %s  errors=%d warnings=%d notices=%d  %d ms%n", valid ? "valid" : "invalid", file.getName(), errors, warnings, noticeCount, ms);
            for (String[] m : messages) {
                if (!m[0].equals("notice")) System.out.printf("  %s%s %s%n", m[0], m[1].isEmpty() ? "" : " [" + m[1] + "]", oneLine(m[2]));
            }
            if (json.length() > 1) json.append(",");
            json.append("{\"file\":").append(quote(file.getName())).append(",\"valid\":").append(valid).append(",\"ms\":").append(ms).append(",\"messages\":[");
            for (int i = 0; i < messages.size(); i++) {
                String[] m = messages.get(i);
                if (i > 0) json.append(",");
                json.append("{\"severity\":").append(quote(m[0])).append(",\"rule\":").append(quote(m[1])).append(",\"message\":").append(quote(oneLine(m[2])))
                    .append(",\"location\":").append(quote(m[3])).append("}");
            }
            json.append("]}");
        }
        json.append("]\n");
        if (jsonFile != null) Files.write(new File(jsonFile).toPath(), json.toString().getBytes(StandardCharsets.UTF_8));
        System.out.printf("einvoice-validator: %d files, %d valid, %d invalid in %d ms%n", files.length, files.length - invalid, invalid, (System.nanoTime() - started) / 1_000_000);
        System.exit(invalid == 0 ? 0 : 1);
    }

    /** Each message of the report: severity (its element's name), rule (criterion), text, location. */
    private static List<String[]> messages(String report) throws Exception {
        List<String[]> out = new ArrayList<>();
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        org.w3c.dom.Document doc = factory.newDocumentBuilder().parse(new InputSource(new StringReader(report)));
        for (String tag : new String[] {"exception", "fatal", "error", "warning", "notice"}) {
            NodeList nodes = doc.getElementsByTagName(tag);
            for (int i = 0; i < nodes.getLength(); i++) {
                Element e = (Element) nodes.item(i);
                String text = e.getFirstChild() == null ? "" : e.getFirstChild().getTextContent();
                // The schematron's messages carry their rule as "[ID BR-CO-15]"; others have none.
                Matcher id = RULE_ID.matcher(text);
                out.add(new String[] {tag, id.find() ? id.group(1) : "", text, e.getAttribute("location")});
            }
        }
        return out;
    }

    private static String oneLine(String s) {
        return s.replaceAll("\\s+", " ").trim();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
